// The reference service is Python (Django REST Framework): these reproduce the few Python
// string rules that decide its answers, so edge-case queries are read the same way.

/** Python's `str.isspace()` characters: what `str.strip()` removes. */
const PY_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;
/**
 * What `int(str)` skips around a number: str.isspace() except U+001C-U+001F (CPython turns
 * non-ASCII spaces into ' ' but then skips only ASCII space, \t, \n, \v, \f and \r).
 */
const PY_INT_SPACE = /[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/**
 * Python's `str.strip()` with no argument. A scan from each end, not a `\s+$` regex: that one
 * backtracks quadratically on a long run of spaces inside a value (an 8 KiB query took 0.2 s).
 */
export function pyStrip(s: string): string {
  return stripRuns(s, PY_SPACE);
}

/** Python's `bytes.strip()`: ASCII whitespace only (space, \t, \n, \r, \v, \f). */
export function pyBytesStrip(s: string): string {
  return stripRuns(s, PY_BYTES_SPACE);
}

const PY_BYTES_SPACE = /[ \t\n\r\v\f]/;

function stripRuns(s: string, space: RegExp): string {
  let start = 0;
  let end = s.length;
  while (start < end && space.test(s[start]!)) start++;
  while (end > start && space.test(s[end - 1]!)) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/** CPython refuses to convert decimal strings longer than this (sys.int_info.default_max_str_digits). */
const MAX_INT_DIGITS = 4300;

/**
 * Python's `int(text)` for a string: surrounding whitespace (PY_INT_SPACE), an optional sign,
 * decimal digits of any script (Unicode Nd), single underscores between digits. Returns null
 * where Python raises ValueError.
 */
export function parsePyInt(text: string): bigint | null {
  if (asciiDigits(text)) return BigInt(text); // most: a page number, a page size
  const s = stripRuns(text, PY_INT_SPACE);
  let i = 0;
  let negative = false;
  if (s[0] === '+' || s[0] === '-') {
    negative = s[0] === '-';
    i = 1;
  }
  let digits = '';
  let lastWasDigit = false;
  for (const ch of s.slice(i)) {
    if (ch === '_') {
      if (!lastWasDigit) return null;
      lastWasDigit = false;
      continue;
    }
    const d = decimalValue(ch);
    if (d < 0) return null;
    digits += String.fromCharCode(48 + d);
    lastWasDigit = true;
  }
  if (!digits || !lastWasDigit || digits.length > MAX_INT_DIGITS) return null;
  const value = BigInt(digits);
  return negative ? -value : value;
}

/**
 * parsePyInt(), as a number where the text is at most 15 ASCII digits (exactly its value: most
 * page numbers and sizes, read without making a BigInt), else as parsePyInt() gives it.
 */
export function parsePyIntNumber(text: string): number | bigint | null {
  return asciiDigits(text) ? Number(text) : parsePyInt(text);
}

/** Whether `text` is 1 to 15 ASCII digits: what int() reads as BigInt() does, with nothing to strip. */
function asciiDigits(text: string): boolean {
  if (text.length === 0 || text.length > 15) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

const ND = /^\p{Nd}$/u;

/** Value of a decimal digit of any script, or -1. Nd digits come in runs of ten starting at zero. */
function decimalValue(ch: string): number {
  const c = ch.codePointAt(0)!;
  if (c >= 48 && c <= 57) return c - 48;
  if (c < 128 || !ND.test(ch)) return -1;
  let start = c;
  while (ND.test(String.fromCodePoint(start - 1))) start--;
  return (c - start) % 10;
}
