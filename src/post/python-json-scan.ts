// The tokens of a JSON text as Python's C scanner reads them (json.loads, strict strings): white
// space, strings with their escapes (surrogate pairs joined, lone ones kept), and numbers (bigint
// for an integer, as Python's int, under CPython's limit on digits; number for the rest).

/** json.loads' error, with Python's message. */
export class PyJsonError extends Error {}

/** Reports an error at an index of the text (python-json.ts adds Python's line and column). */
export type Fail = (message: string, at: number) => never;

/** CPython's limit on the digits of an int read from text (sys.get_int_max_str_digits()). */
const MAX_INT_DIGITS = 4300;
const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** The index of the first character at or after `i` that is not JSON white space. */
export function skipSpace(text: string, i: number): number {
  while (isSpace(text[i])) i++;
  return i;
}

/** A string whose opening quote is just before `start`: its value and the index after its closing quote. */
export function scanString(text: string, start: number, fail: Fail): [string, number] {
  let out = '';
  let i = start;
  for (;;) {
    let next = i;
    let c: string | undefined;
    for (; next < text.length; next++) {
      c = text[next];
      if (c === '"' || c === '\\') break;
      if (c! <= '\x1f') fail('Invalid control character at', next);
    }
    if (next >= text.length) fail('Unterminated string starting at', start - 1);
    out += text.slice(i, next);
    next++;
    if (c === '"') return [out, next];
    if (next === text.length) fail('Unterminated string starting at', start - 1);
    const escape = text[next]!;
    if (escape !== 'u') {
      if (!(escape in ESCAPES)) fail('Invalid \\escape', next - 1);
      out += ESCAPES[escape];
      i = next + 1;
      continue;
    }
    const unit = (at: number) =>
      /^[0-9a-fA-F]{4}$/.test(text.slice(at, at + 4)) ? parseInt(text.slice(at, at + 4), 16) : -1;
    if (next + 5 >= text.length) fail('Invalid \\uXXXX escape', next);
    let code = unit(next + 1);
    if (code < 0) fail('Invalid \\uXXXX escape', next);
    i = next + 5;
    // A high surrogate escape followed by a low one is one character; any other is kept alone.
    if (code >= 0xd800 && code <= 0xdbff && i + 6 < text.length && text[i] === '\\' && text[i + 1] === 'u') {
      const low = unit(i + 2);
      if (low < 0) fail('Invalid \\uXXXX escape', i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i += 6;
      }
    }
    out += String.fromCodePoint(code);
  }
}

/** A JSON number at `start` as Python reads it: bigint for an integer, number for the rest. */
export function scanNumber(
  text: string,
  start: number,
  expectingValue: (at: number) => never,
): [bigint | number, number] {
  let i = start;
  if (text[i] === '-') i++;
  if (text[i] === '0') i++;
  else if (isDigit(text[i])) while (isDigit(text[i])) i++;
  else expectingValue(start);
  let float = false;
  if (text[i] === '.' && isDigit(text[i + 1])) {
    float = true;
    i += 2;
    while (isDigit(text[i])) i++;
  }
  if (text[i] === 'e' || text[i] === 'E') {
    let j = i + 1;
    if (text[j] === '+' || text[j] === '-') j++;
    const digits = j;
    while (isDigit(text[j])) j++;
    if (j > digits) [float, i] = [true, j];
  }
  const literal = text.slice(start, i);
  if (float) return [Number(literal), i];
  const digits = literal.length - (literal.startsWith('-') ? 1 : 0);
  if (digits > MAX_INT_DIGITS) {
    throw new PyJsonError(
      `Exceeds the limit (${MAX_INT_DIGITS} digits) for integer string conversion: value has ${digits} digits; use sys.set_int_max_str_digits() to increase the limit`,
    );
  }
  return [BigInt(literal), i];
}
