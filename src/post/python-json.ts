// Python's json.loads as DRF's JSONParser calls it (the C scanner, strict strings, NaN and
// Infinity refused), so a POST body is read to the same values and refused with the same
// message: integers are kept whole as bigint (Python's int), other numbers are floats (number).
// Objects have no prototype, so a key such as "__proto__" is only a key.

export type PyJson = null | boolean | string | bigint | number | PyJson[] | { [key: string]: PyJson };

export class PyJsonError extends Error {}

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
const CONSTANTS = [
  ['NaN', 'NaN'],
  ['Infinity', 'Infinity'],
  ['-Infinity', '-Infinity'],
] as const;

/** Parses `text` as json.loads does; throws PyJsonError with Python's message (positions in code points). */
export function parsePyJson(text: string): PyJson {
  const fail = (message: string, at: number): never => {
    throw new PyJsonError(`${message}: ${position(text, at)}`);
  };
  if (text.startsWith('\uFEFF')) fail('Unexpected UTF-8 BOM (decode using utf-8-sig)', 0);
  const end = text.length;
  let i = skipSpace(text, 0);
  const expectingValue = (at: number) => fail('Expecting value', at);

  // An explicit stack of open containers, so depth costs memory, not call frames.
  type Frame = { array: PyJson[]; key?: undefined } | { object: { [key: string]: PyJson }; key: string };
  const stack: Frame[] = [];
  let value: PyJson;
  for (;;) {
    // A value starts at i.
    const c = text[i];
    if (c === '"') {
      [value, i] = scanString(text, i + 1, fail);
    } else if (c === '{') {
      i = skipSpace(text, i + 1);
      if (text[i] === '}') {
        value = Object.create(null) as { [key: string]: PyJson };
        i++;
      } else {
        const object = Object.create(null) as { [key: string]: PyJson };
        let key: string;
        [key, i] = readKey(text, i, fail);
        stack.push({ object, key });
        continue;
      }
    } else if (c === '[') {
      i = skipSpace(text, i + 1);
      if (text[i] === ']') {
        value = [];
        i++;
      } else {
        if (i >= end) fail('Expecting value', end);
        stack.push({ array: [] });
        continue;
      }
    } else if (text.startsWith('null', i)) [value, i] = [null, i + 4];
    else if (text.startsWith('true', i)) [value, i] = [true, i + 4];
    else if (text.startsWith('false', i)) [value, i] = [false, i + 5];
    else {
      const constant = CONSTANTS.find(([word]) => text.startsWith(word, i));
      if (constant) throw new PyJsonError(`Out of range float values are not JSON compliant: '${constant[1]}'`);
      [value, i] = scanNumber(text, i, expectingValue);
    }
    // Hand the value to the containers it closes.
    for (;;) {
      const frame = stack.at(-1);
      if (!frame) {
        i = skipSpace(text, i);
        if (i !== end) fail('Extra data', i);
        return value;
      }
      i = skipSpace(text, i);
      const close = 'array' in frame ? ']' : '}';
      if ('array' in frame) frame.array.push(value);
      else frame.object[frame.key] = value;
      if (text[i] === close) {
        stack.pop();
        value = 'array' in frame ? frame.array : frame.object;
        i++;
        continue;
      }
      if (text[i] !== ',') fail("Expecting ',' delimiter", i);
      i = skipSpace(text, i + 1);
      if ('array' in frame) {
        if (i >= end) fail('Expecting value', end);
      } else [frame.key, i] = readKey(text, i, fail);
      break;
    }
  }
}

type Fail = (message: string, at: number) => never;

/** `"key"` then `:`; returns the key and where its value starts. */
function readKey(text: string, i: number, fail: Fail): [string, number] {
  if (text[i] !== '"') fail('Expecting property name enclosed in double quotes', i);
  const [key, after] = scanString(text, i + 1, fail);
  i = skipSpace(text, after);
  if (text[i] !== ':') fail("Expecting ':' delimiter", i);
  return [key, skipSpace(text, i + 1)];
}

function skipSpace(text: string, i: number): number {
  while (isSpace(text[i])) i++;
  return i;
}

/** A string whose opening quote is just before `start`: its value and the index after its closing quote. */
function scanString(text: string, start: number, fail: Fail): [string, number] {
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
function scanNumber(text: string, start: number, expectingValue: (at: number) => never): [bigint | number, number] {
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

/** `line L column C (char N)` as Python's JSONDecodeError counts them: in code points, not UTF-16 units. */
function position(text: string, at: number): string {
  const before = text.slice(0, at);
  const codePoints = (s: string) => s.length - (s.match(/[\ud800-\udbff][\udc00-\udfff]/g)?.length ?? 0);
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.split('\n').length;
  return `line ${line} column ${codePoints(before.slice(lineStart)) + 1} (char ${codePoints(before)})`;
}
