import { fromUtf8, utf8 } from './bytes.js';

// Request paths as the reference (Django behind gunicorn) reads and writes them. gunicorn
// percent-decodes the path to bytes (PATH_INFO); Django decodes those as UTF-8, putting invalid
// bytes back as %XX (repercent_broken_unicode), and matches routes on that text. Links and
// redirects carry the path re-encoded by escape_uri_path, the query by iri_to_uri.

/** Django's `request.path` for a raw request path (`/caf%C3%A9/cities/` → `/café/cities/`). */
export function pathInfo(raw: string): string {
  if (asciiWithoutPercent(raw)) return raw;
  // Python's unquote_to_bytes: %XX is a byte, any other character its UTF-8 bytes.
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(raw.slice(i + 1, i + 3))) {
      bytes.push(parseInt(raw.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      const point = raw.codePointAt(i)!;
      if (point > 0xffff) i++;
      bytes.push(...utf8(String.fromCodePoint(point).toWellFormed()));
    }
  }
  let path = '';
  for (let i = 0; i < bytes.length; ) {
    const length = sequenceLength(bytes, i);
    if (length) path += fromUtf8(Uint8Array.from(bytes.slice(i, i + length)));
    else path += `%${bytes[i]!.toString(16).toUpperCase().padStart(2, '0')}`;
    i += length || 1;
  }
  return path;
}

/** Whether a path has neither `%` nor a non-ASCII character (most do): read by code unit, no regex run per request. */
function asciiWithoutPercent(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x25 || c >= 0x80) return false;
  }
  return true;
}

/** Length of the well-formed UTF-8 sequence starting at `i` (Unicode table 3-7), or 0. */
function sequenceLength(bytes: readonly number[], i: number): number {
  const b = bytes[i]!;
  if (b < 0x80) return 1;
  const [length, low, high] =
    b >= 0xc2 && b <= 0xdf
      ? [2, 0x80, 0xbf]
      : b === 0xe0
        ? [3, 0xa0, 0xbf]
        : b === 0xed
          ? [3, 0x80, 0x9f]
          : b >= 0xe1 && b <= 0xef
            ? [3, 0x80, 0xbf]
            : b === 0xf0
              ? [4, 0x90, 0xbf]
              : b === 0xf4
                ? [4, 0x80, 0x8f]
                : b >= 0xf1 && b <= 0xf3
                  ? [4, 0x80, 0xbf]
                  : [0, 0, 0];
  if (!length) return 0;
  const second = bytes[i + 1];
  if (second === undefined || second < low || second > high) return 0;
  for (let k = 2; k < length; k++) {
    const next = bytes[i + k];
    if (next === undefined || next < 0x80 || next > 0xbf) return 0;
  }
  return length;
}

/**
 * Python's `urllib.parse.quote(text, safe)`: UTF-8 percent-encoding (uppercase hex) of all but
 * letters, digits, `_.-~` and the `safe` characters.
 */
function pyQuote(text: string, safe: string): string {
  return encodeURIComponent(text.toWellFormed()).replace(/%([0-7][0-9A-F])|[!'()*]/g, (match, hex?: string) => {
    const char = hex ? String.fromCharCode(parseInt(hex, 16)) : match;
    if (safe.includes(char)) return char;
    return hex ? match : `%${char.charCodeAt(0).toString(16).toUpperCase()}`;
  });
}

/** Django's escape_uri_path: a path as links and redirects carry it. */
export function escapeUriPath(path: string): string {
  return pyQuote(path, "/:@&+$,-_.!~*'()");
}

/** Django's iri_to_uri: a query string as a redirect carries it. */
export function iriToUri(text: string): string {
  return pyQuote(text, "/#%[]=:;$&()+,!?*@'~");
}

/** Where `/cities/` is mounted for a base URL, as request paths are matched: `` or e.g. `/café`. */
export function mountOf(baseUrl: string): string {
  return pathInfo(new URL(baseUrl).pathname).replace(/\/+$/, '');
}

/** A base URL's path as the reference would write it in links (`/caf%C3%A9`), without trailing slashes. */
export function canonicalPath(url: URL): string {
  return escapeUriPath(pathInfo(url.pathname)).replace(/\/+$/, '');
}

/**
 * A request target's path and query, as gunicorn splits it: a fragment off first, then the query.
 * `queryAt`: where the query begins in the target (its length when there is none).
 */
export function splitTarget(target: string): { rawPath: string; query: string; queryAt: number } {
  const hash = target.indexOf('#');
  const rest = hash < 0 ? target : target.slice(0, hash);
  const q = rest.indexOf('?');
  return q < 0
    ? { rawPath: rest, query: '', queryAt: rest.length }
    : { rawPath: rest.slice(0, q), query: rest.slice(q + 1), queryAt: q + 1 };
}

/**
 * The origin form (`/path?query`) of a request target: an absolute-form target
 * (`http://host/cities/`, as sent to proxies) loses its scheme and authority, as gunicorn reads it.
 */
export function originForm(target: string): string {
  if (target.charCodeAt(0) === 0x2f) return target; // `/`: already the origin form (no scheme starts so)
  const absolute = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(target);
  if (!absolute) return target;
  const rest = target.slice(absolute[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * A regular expression's source matching a path (as requests are matched: decoded, pathInfo) in
 * every spelling that reads as it: each character as itself (a path matched decoded, or typed) or
 * as its UTF-8 bytes percent-encoded, hex in either case (`/api`: also `/%61pi`, `%2F` for `/`).
 */
export function anySpelling(path: string): string {
  const hex = (byte: number) =>
    `%${[...byte.toString(16).toUpperCase().padStart(2, '0')].map((d) => (/[A-F]/.test(d) ? `[${d}${d.toLowerCase()}]` : d)).join('')}`;
  return [...path]
    .map((char) => {
      const raw = char.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
      return `(?:${raw}|${[...utf8(char)].map(hex).join('')})`;
    })
    .join('');
}
