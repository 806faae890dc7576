// Python's json.loads as DRF's JSONParser calls it (the C scanner, strict strings, NaN and
// Infinity refused), so a POST body is read to the same values and refused with the same
// message: integers are kept whole as bigint (Python's int), other numbers are floats (number).
// Objects have no prototype, so a key such as "__proto__" is only a key. Its tokens: python-json-scan.ts.

import { type Fail, PyJsonError, scanNumber, scanString, skipSpace } from './python-json-scan.js';

export type PyJson = null | boolean | string | bigint | number | PyJson[] | { [key: string]: PyJson };

export { PyJsonError };

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

/** `"key"` then `:`; returns the key and where its value starts. */
function readKey(text: string, i: number, fail: Fail): [string, number] {
  if (text[i] !== '"') fail('Expecting property name enclosed in double quotes', i);
  const [key, after] = scanString(text, i + 1, fail);
  i = skipSpace(text, after);
  if (text[i] !== ':') fail("Expecting ':' delimiter", i);
  return [key, skipSpace(text, i + 1)];
}

/** `line L column C (char N)` as Python's JSONDecodeError counts them: in code points, not UTF-16 units. */
function position(text: string, at: number): string {
  const before = text.slice(0, at);
  const codePoints = (s: string) => s.length - (s.match(/[\ud800-\udbff][\udc00-\udfff]/g)?.length ?? 0);
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.split('\n').length;
  return `line ${line} column ${codePoints(before.slice(lineStart)) + 1} (char ${codePoints(before)})`;
}
