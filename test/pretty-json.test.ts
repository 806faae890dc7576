import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prettyParts, type PrettyMode } from '../src/core/pretty-json.js';

/** The browsable page's JSON as it was first written, on whole text: escape everything, link whole URL strings. */
function linkedOracle(pretty: string): string {
  const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  let html = '';
  let last = 0;
  for (const m of pretty.matchAll(/"(https?:\/\/[^"\\\s]+)"/g)) {
    html += `${escape(pretty.slice(last, m.index))}"<a href="${escape(m[1]!)}" rel="nofollow">${escape(m[1]!)}</a>"`;
    last = m.index + m[0].length;
  }
  return html + escape(pretty.slice(last));
}

/** Bytes cut at the given points (anywhere: inside strings, escapes, multi-byte characters). */
function cut(bytes: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  return [...at, bytes.length].map((end, i) => bytes.subarray(i ? at[i - 1] : 0, end));
}

const run = (parts: Buffer[], indent: number, mode: PrettyMode) =>
  Buffer.concat([...prettyParts(parts, indent, mode)]).toString();

// Strings full of what a layout could trip on: quotes, backslashes, braces, commas, colons,
// HTML specials, multi-byte and astral characters, line separators, and URLs.
const text = fc.oneof(
  fc.string({
    unit: fc.constantFrom(
      '"',
      '\\',
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '<',
      '&',
      "'",
      'é',
      '東',
      '𝒜',
      '\u2028',
      ' ',
      'a',
      '\n',
    ),
    maxLength: 8,
  }),
  fc.constantFrom(
    'http://x/cities/?page=2',
    'https://a.example/b?c=d&e=f',
    'http://has space',
    'http://q"uote',
    'https://',
  ),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    tie('list'),
    tie('object'),
  ),
  list: fc.array(tie('any'), { maxLength: 4 }),
  object: fc.dictionary(text, tie('any'), { maxKeys: 4 }),
})).any;

describe('pretty JSON from parts cut anywhere', () => {
  it('is json.dumps(indent=n) of the value, whatever the cuts', () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 1, max: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (v, indent, points) => {
        const compact = Buffer.from(JSON.stringify(v));
        expect(run(cut(compact, points), indent, 'json')).toBe(JSON.stringify(v, null, indent));
      }),
      { numRuns: 2000 },
    );
  });

  it('for the browsable page, is that text escaped for HTML with URL strings linked, whatever the cuts', () => {
    fc.assert(
      fc.property(value, fc.array(fc.nat(), { maxLength: 6 }), (v, points) => {
        const compact = Buffer.from(JSON.stringify(v));
        expect(run(cut(compact, points), 4, 'html')).toBe(linkedOracle(JSON.stringify(v, null, 4)));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['an empty object and list stay on one line', '{"a":{},"b":[]}', '{\n  "a": {},\n  "b": []\n}'],
    ['a brace inside a string is text', '{"a":"{[,:]}"}', '{\n  "a": "{[,:]}"\n}'],
    ['an escaped quote does not end a string', '["a\\"b",1]', '[\n  "a\\"b",\n  1\n]'],
  ])('%s', (_, compact, expected) => {
    const bytes = Buffer.from(compact);
    for (let at = 0; at <= bytes.length; at++) expect(run(cut(bytes, [at]), 2, 'json')).toBe(expected);
  });
});
