import { describe, expect, it } from 'vitest';
import { utf8 } from '../src/core/bytes.js';
import { type City, NAME_FIELDS } from '../src/core/fields.js';
import { cityJson } from '../src/core/json-text.js';
import { bodyBytes } from '../src/core/page.js';
import { compactCity, compactLength, expandCity } from '../src/site/compact-cities.js';
import { blockParts, decodeBlock, decodeRanks, tagBytes } from '../src/site/edge-format.js';
import { makeCity } from './helpers.js';

// A fine block's cities written compact (site/compact-cities.ts): the values without the keys,
// repeated values by reference, expanded back to the very bytes of the city's JSON.

const text = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString() : bytes);
const TAG = tagBytes('0123456789abcdef');

describe('compactCity and expandCity: every city back byte for byte, smaller', () => {
  const names = (f: (i: number) => string) =>
    Object.fromEntries(NAME_FIELDS.map((field, i) => [field, f(i)])) as Partial<City>;
  it.each<[string, City, number]>([
    // [what it checks, the city, the most bytes it may take compact]
    ['one name in every language: 15 of them references', makeCity(7), 110],
    [
      'every name its own',
      makeCity(
        123456,
        names((i) => `Name ${i} ${'x'.repeat(i)}`),
      ),
      400,
    ],
    [
      'quotes, backslashes, control characters, U+2028, astral',
      makeCity(2, { name: 'a"b\\c\u0001\u001f\u2028😀', name_de: '\\' }),
      140,
    ],
    [
      'null coordinates, top, one timestamp twice',
      makeCity(9, { longitude: null, latitude: null, top: true, updated_at: '2024-01-01T00:00:00.000001Z' }),
      80,
    ],
    [
      'names that read as the id and a coordinate: other texts, no references',
      makeCity(15, { name: '15', name_ar: '1.5' }),
      110,
    ],
    ['names of 255 characters', makeCity(4_000_000_000, { name: 'é'.repeat(255) }), 640],
    [
      'a value that ends in a backslash before a quote',
      makeCity(3, { name: 'a\\', name_en: '"', name_fr: '\\"' }),
      130,
    ],
  ])('%s', (_, city, most) => {
    const json = utf8(cityJson(city));
    const compact = compactCity(json);
    expect(compact.length).toBe(compactLength(json));
    expect(compact.length).toBeLessThanOrEqual(most);
    expect(compact[0]).not.toBe(0x7b);
    expect(text(expandCity(compact, 0, compact.length))).toBe(cityJson(city));
    // Within a larger array, as in a block.
    const block = Uint8Array.of(0x1f, ...compact, 0x1f, 0x01);
    expect(text(expandCity(block, 1, 1 + compact.length))).toBe(cityJson(city));
  });

  it.each<[string, string]>([
    ['not every field', '{"id":1}'],
    ['fields in another order', cityJson(makeCity(1)).replace('"name_ar"', '"name_xx"')],
    ['a space after a comma', cityJson(makeCity(1)).replace(',"name_ar":', ', "name_ar":')],
    ['bytes after its end', `${cityJson(makeCity(1))} `],
  ])('JSON that does not follow the keys is kept as it is (%s), and read as it is', (_, json) => {
    const bytes = utf8(json);
    expect(compactCity(bytes)).toBe(bytes);
    expect(compactLength(bytes)).toBe(bytes.length);
    if (json.endsWith('}')) expect(text(expandCity(bytes, 0, bytes.length))).toBe(json);
  });

  const good = compactCity(utf8(cityJson(makeCity(5, { name_ar: 'A' }))));
  it.each<[string, Uint8Array]>([
    ['nothing', new Uint8Array(0)],
    ['cut short', good.subarray(0, good.length - 40)],
    ['a separator more', Uint8Array.of(...good, 0x1f)],
    ['a reference to a later field', Uint8Array.of(0x31, 0x1f, 0x05, ...good.subarray(3))],
    ['an empty value', Uint8Array.of(0x31, 0x1f, 0x1f, ...good.subarray(2))],
    ['JSON without its closing brace', utf8('{"id":1')],
  ])('bytes that are no city are told (%s)', (_, bytes) => expect(expandCity(bytes, 0, bytes.length)).toBeUndefined());

  it('the expanded city is one scratch array, overwritten by the next: its reader copies it at once', () => {
    const [a, b] = [7, 8].map((id) => compactCity(utf8(cityJson(makeCity(id)))));
    const first = expandCity(a!, 0, a!.length)!;
    const kept = text(first);
    expandCity(b!, 0, b!.length);
    expect([kept, text(first)]).toEqual([cityJson(makeCity(7)), cityJson(makeCity(8)).slice(0, first.length)]);
  });
});

describe('a block of compact cities: its own magic, read as JSON, refused by a reader of plain blocks', () => {
  const cities = [makeCity(1), makeCity(2, { name: 'Zürich' }), makeCity(3, { top: true })];
  const json = cities.map((c) => utf8(cityJson(c)));
  const compact = bodyBytes(blockParts(json.map(compactCity), TAG, true));
  const plain = bodyBytes(blockParts(json, TAG));
  it.each<[string, Uint8Array]>([
    ['compact', compact],
    ['plain', plain],
  ])('%s: every city as its JSON', (_, bytes) => {
    const block = decodeBlock(bytes, TAG, 'b.bin');
    expect(Array.from({ length: block.count }, (_, i) => text(block.city(i)))).toEqual(cities.map(cityJson));
  });
  it("the compact block is smaller, and its magic is not the plain blocks' (an older reader says it is not an edge file)", () => {
    expect(compact.length).toBeLessThan(plain.length / 2);
    expect([text(compact.subarray(0, 4)), text(plain.subarray(0, 4))]).toEqual(['CAEC', 'CAE2']);
  });
  it.each<[string, () => unknown, RegExp]>([
    [
      'a compact block whose city is broken',
      () => decodeBlock(Uint8Array.of(...compact.subarray(0, compact.length - 1), 0x1f), TAG, 'b.bin').city(2),
      /b\.bin cannot be read: its city 3 is not a compact city/,
    ],
    ['a block read as a rank file', () => decodeRanks(compact, TAG, 'r.bin'), /r\.bin cannot be read: it is a block/],
  ])('%s is refused', (_, read, message) => expect(read).toThrow(message));
});
