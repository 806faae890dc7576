import { CitiesApiError } from '../core/errors.js';

// TOML basic strings ("..."), written and read for the netlify.toml `edge netlify` writes and
// checks. TOML forbids raw every control character but tab, DEL (U+007F) included, which
// JSON.stringify leaves raw; and it has escapes JSON has not (\UXXXXXXXX, and \e, \xHH in 1.1).

const SHORT: Readonly<Record<string, string>> = {
  b: '\b',
  t: '\t',
  n: '\n',
  f: '\f',
  r: '\r',
  e: '\x1b',
  '"': '"',
  '\\': '\\',
};
const WRITTEN: Readonly<Record<string, string>> = { '\b': 'b', '\n': 'n', '\f': 'f', '\r': 'r', '"': '"', '\\': '\\' };

/**
 * `text` as a TOML basic string, quotes included: controls (tab aside), DEL, `"` and `\` escaped, and the C1
 * controls and U+2028/U+2029, which TOML takes raw but some tools read as line ends.
 * `what` names the text in the refusal of one TOML cannot hold (a lone surrogate: no scalar value).
 */
export function tomlString(text: string, what: string): string {
  if (!text.isWellFormed())
    throw new CitiesApiError(
      `${what} holds a lone UTF-16 surrogate, which no TOML string can hold: use a name of whole Unicode characters`,
      2,
    );
  const body = text.replace(/[\0-\x08\n-\x1f"\\\x7f-\x9f\u2028\u2029]/g, (c) =>
    c in WRITTEN ? `\\${WRITTEN[c]}` : `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
  return `"${body}"`;
}

/**
 * The text of a basic string's body (between its quotes, as TOML 1.0 and 1.1 write it), or undefined
 * when it is not one (a raw control but tab, an unknown escape, one naming no Unicode scalar value).
 */
export function readTomlString(body: string): string | undefined {
  if (/[\0-\x08\n-\x1f\x7f]/.test(body)) return undefined;
  let bad = false;
  const text = body.replace(/\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|x([0-9A-Fa-f]{2})|(.)|$)/gs, (_, u, U, x, c) => {
    const hex: string | undefined = u ?? U ?? x;
    if (hex === undefined) return c !== undefined && c in SHORT ? SHORT[c]! : ((bad = true), '');
    const code = parseInt(hex, 16);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return ((bad = true), '');
    return String.fromCodePoint(code);
  });
  return bad || /"/.test(body.replace(/\\./gs, '')) ? undefined : text;
}
