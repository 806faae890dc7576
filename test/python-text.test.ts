import { describe, expect, it } from 'vitest';
import { parsePyInt, pyStrip } from '../src/core/python-text.js';

// Expected values are what CPython 3.11's int() and str.strip() return.
describe('parsePyInt reads integers as Python int() does', () => {
  it.each([
    ['plain digits', '2', 2n],
    ['surrounding spaces', ' 2 ', 2n],
    ['plus sign', '+2', 2n],
    ['minus sign', '-1', -1n],
    ['zero', '0', 0n],
    ['leading zeros', '007', 7n],
    ['underscore between digits', '1_000', 1000n],
    ['Arabic-Indic digit', '٢', 2n],
    ['fullwidth digits', '１２', 12n],
    ['mathematical bold digit', '𝟐', 2n],
    ['no-break and ideographic spaces around', '\u00a02\u3000', 2n],
    ['underscore between non-ASCII digits', '٣_٤', 34n],
    ['beyond 2^64', '1000000000000000000000', 10n ** 21n],
    ['15 digits', '123456789012345', 123456789012345n],
    ['16 digits', '1234567890123456', 1234567890123456n],
  ])('%s: %j → %s', (_, text, expected) => {
    expect(parsePyInt(text)).toBe(expected);
  });

  it.each([
    ['double underscore', '1__0'],
    ['leading underscore', '_1'],
    ['trailing underscore', '1_'],
    ['decimal point', '2.0'],
    ['empty', ''],
    ['only a space', ' '],
    ['letters', 'abc'],
    ['zero-width space is not whitespace', '\u200b2'],
    ['BOM is not whitespace', '\ufeff2'],
    ['exponent', '1e3'],
    ['hex prefix', '0x10'],
    ['two signs', '--2'],
    ['mixed signs', '+-2'],
    ['more than 4300 digits (CPython limit)', '9'.repeat(4301)],
  ])('%s: %j → ValueError (null)', (_, text) => {
    expect(parsePyInt(text)).toBeNull();
  });

  it('accepts exactly 4300 digits', () => {
    expect(parsePyInt('9'.repeat(4300))).toBe(10n ** 4300n - 1n);
  });
});

/** Every str.isspace() character, and whether int() skips it around a number (CPython 3.11.2, /usr/bin/python3). */
const PY_SPACES: [string, boolean][] = [
  ...[0x9, 0xa, 0xb, 0xc, 0xd, 0x20].map((c): [string, boolean] => [String.fromCodePoint(c), true]),
  ...[0x1c, 0x1d, 0x1e, 0x1f].map((c): [string, boolean] => [String.fromCodePoint(c), false]),
  ...[
    0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
    0x2029, 0x202f, 0x205f, 0x3000,
  ].map((c): [string, boolean] => [String.fromCodePoint(c), true]),
];
const hex = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

describe('#13 int() skips only some of the whitespace str.strip() removes (U+001C-U+001F are not skipped)', () => {
  it.each(PY_SPACES.map(([ch, skipped]) => [hex(ch), ch, skipped] as const))(
    '%s around a number: int() %s',
    (_, ch, skipped) => {
      expect(parsePyInt(`${ch}1${ch}`)).toBe(skipped ? 1n : null);
      expect(parsePyInt(`${ch}1`)).toBe(skipped ? 1n : null);
      expect(parsePyInt(`1${ch}`)).toBe(skipped ? 1n : null);
    },
  );

  it.each(PY_SPACES.map(([ch]) => [hex(ch), ch] as const))('%s is stripped by str.strip()', (_, ch) => {
    expect(pyStrip(`${ch}a${ch}`)).toBe('a');
  });
});

describe('pyStrip strips what Python str.strip() strips', () => {
  it.each([
    ['ASCII spaces', '  name_en ', 'name_en'],
    ['tabs and newlines', '\tname_en\n', 'name_en'],
    ['information separators and NEL', ' \x1c a \x85', 'a'],
    ['BOM and zero-width space are kept', '\ufeffa\u200b', '\ufeffa\u200b'],
    ['inner spaces kept', ' a b ', 'a b'],
  ])('%s', (_, text, expected) => {
    expect(pyStrip(text)).toBe(expected);
  });

  it('takes linear time on a long run of spaces inside a value (was quadratic: 7 s for 64 KB)', () => {
    const text = `a${' '.repeat(64_000)}b`;
    const started = performance.now();
    expect(pyStrip(` ${text}\t`)).toBe(text);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
