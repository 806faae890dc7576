import { createHash, timingSafeEqual } from 'node:crypto';

export interface AuthFailure {
  readonly status: 401;
  readonly detail: string;
}

const NOT_PROVIDED = 'Authentication credentials were not provided.';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * DRF's TokenAuthentication on `Authorization: Token <key>`. Django hands DRF the header as the
 * bytes received (node gives them as latin-1 text): split on ASCII whitespace only (so U+00A0 is
 * part of the key), the key decoded as UTF-8. The key is compared in constant time (both sides
 * hashed first, so neither length nor content leaks through timing; `equal`, the comparison, is
 * a test's to watch). Null when authenticated.
 */
export function checkToken(
  header: string | undefined,
  token: string,
  equal: (a: Uint8Array, b: Uint8Array) => boolean = timingSafeEqual,
): AuthFailure | null {
  const parts = splitAsciiSpace(Buffer.from(header ?? '', 'latin1'));
  if (!parts.length || parts[0]!.toString('latin1').replace(/[A-Z]/g, (c) => c.toLowerCase()) !== 'token')
    return { status: 401, detail: NOT_PROVIDED };
  if (parts.length === 1) return { status: 401, detail: 'Invalid token header. No credentials provided.' };
  if (parts.length > 2) return { status: 401, detail: 'Invalid token header. Token string should not contain spaces.' };
  let key: string;
  try {
    key = utf8.decode(parts[1]);
  } catch {
    return { status: 401, detail: 'Invalid token header. Token string should not contain invalid characters.' };
  }
  return equal(digest(key), tokenDigest(token)) ? null : { status: 401, detail: 'Invalid token.' };
}

const digest = (s: string) => createHash('sha256').update(s).digest();
/** The server's token hashed once, not for every POST (keyed by the token itself: a server has one). */
let known: { token: string; digest: Buffer } | undefined;
function tokenDigest(token: string): Buffer {
  if (known?.token !== token) known = { token, digest: digest(token) };
  return known.digest;
}

/** Python's `bytes.split()`: runs of ASCII whitespace (space, \t \n \v \f \r) separate, none kept. */
function splitAsciiSpace(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = -1;
  for (let i = 0; i <= bytes.length; i++) {
    const space = i === bytes.length || bytes[i] === 0x20 || (bytes[i]! >= 0x09 && bytes[i]! <= 0x0d);
    if (space && start >= 0) parts.push(bytes.subarray(start, i));
    if (space) start = -1;
    else if (start < 0) start = i;
  }
  return parts;
}

/**
 * What is wrong with a token for `--writable`: an `error` when no client could ever send it
 * (the key is one header word, sent as UTF-8), a `warning` when many clients cannot.
 */
export function tokenProblems(token: string): { error?: string; warning?: string } {
  if (token.includes('\uFFFD'))
    return {
      error:
        'is not valid UTF-8 text (it holds U+FFFD, what undecodable bytes become); set it to UTF-8 text, preferably ASCII',
    };
  const bad = /[\x00-\x20\x7f]/.exec(token);
  if (bad)
    return {
      error: `contains ${JSON.stringify(bad[0])} (U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}): ASCII spaces and control characters cannot be part of the key of an Authorization: Token header, so no client could send it; use letters, digits and punctuation`,
    };
  if (/[^\x20-\x7e]/.test(token)) {
    return {
      warning:
        "is not ASCII: clients must send its UTF-8 bytes in the Authorization header (as the reference, DRF, reads them), which browsers' fetch and Node's http refuse to do; an ASCII token works with every client",
    };
  }
  return {};
}
