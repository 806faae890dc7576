import { describe, expect, it } from 'vitest';
import { cityJson, envelopeJson, jsonString, pyFloatRepr, resultOffsets } from '../src/core/json-text.js';
import { envelopeStream, PartPool, type CityBatch } from '../src/core/envelope-stream.js';
import type { City } from '../src/core/fields.js';

describe('pyFloatRepr writes floats as Python repr()', () => {
  it.each([
    [66, '66.0'],
    [1e-6, '1e-06'],
    [1.5e-6, '1.5e-06'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [-52, '-52.0'],
    [117.69229, '117.69229'],
    [1e16, '1e+16'],
    [1e15, '1000000000000000.0'],
    [123456789012345678, '1.2345678901234568e+17'],
    [0.1, '0.1'],
    [-0.5, '-0.5'],
    [180, '180.0'],
    [12.345678, '12.345678'],
    [0, '0.0'],
  ])('%d → %s', (value, expected) => {
    expect(pyFloatRepr(value)).toBe(expected);
  });
});

describe('jsonString escapes as json.dumps(ensure_ascii=False) plus DRF', () => {
  it.each([
    ['non-ASCII kept as UTF-8', 'Zürich 東京', '"Zürich 東京"'],
    ['quotes and backslash', 'a"b\\c', '"a\\"b\\\\c"'],
    ['short escapes', '\n\r\t\b\f', '"\\n\\r\\t\\b\\f"'],
    ['other control characters as lowercase \\u', '\x01\x1f', '"\\u0001\\u001f"'],
    ['DEL kept', '\x7f', '"\x7f"'],
    ['line and paragraph separators escaped', 'a\u2028b\u2029', '"a\\u2028b\\u2029"'],
    ['slash not escaped', 'http://x/y', '"http://x/y"'],
  ])('%s', (_, text, expected) => {
    expect(jsonString(text)).toBe(expected);
  });
});

describe('answers are assembled compactly in the spec field order', () => {
  const city = {
    id: 7,
    name_ar: 'ا',
    name_en: 'A',
    name_ch: '甲',
    name_fr: 'A',
    name_ur: 'ا',
    name_fa: 'ا',
    name_sp: 'A',
    name_de: 'A',
    name_it: 'A',
    name_uk: 'А',
    name_hi: 'अ',
    name_id: 'A',
    name_ru: 'А',
    name_pt: 'A',
    name_ms: 'A',
    name_tr: 'A',
    longitude: 1e-6,
    latitude: null,
    top: true,
    created_at: '2020-01-01T00:00:00.000001Z',
    updated_at: '2020-01-02T00:00:00.000000Z',
  } satisfies City;

  it('serializes all 22 fields in order with Python number forms', () => {
    const text = cityJson(city);
    expect(Object.keys(JSON.parse(text))).toEqual([
      'id',
      'name_ar',
      'name_en',
      'name_ch',
      'name_fr',
      'name_ur',
      'name_fa',
      'name_sp',
      'name_de',
      'name_it',
      'name_uk',
      'name_hi',
      'name_id',
      'name_ru',
      'name_pt',
      'name_ms',
      'name_tr',
      'longitude',
      'latitude',
      'top',
      'created_at',
      'updated_at',
    ]);
    expect(text).toContain('"longitude":1e-06,"latitude":null,"top":true,');
    expect(text.startsWith('{"id":7,"name_ar":"ا","name_en":"A",')).toBe(true);
  });

  it('splits a large envelope into consecutive parts', () => {
    const city = Buffer.from(`{"name":"${'x'.repeat(1000)}"}`);
    const parts = [...envelopeJson(3000, 'null', 'null', 3000, () => city)];
    expect(parts.length).toBeGreaterThan(5);
    expect(JSON.parse(Buffer.concat(parts).toString()).results).toHaveLength(3000);
  });

  it('builds the envelope with count, next, previous, results', () => {
    const cities = [Buffer.from('{}'), Buffer.from('{"a":1}')];
    expect(
      Buffer.concat([...envelopeJson(1, '"http://x/cities/?page=2"', 'null', 2, (i) => cities[i]!)]).toString(),
    ).toBe('{"count":1,"next":"http://x/cities/?page=2","previous":null,"results":[{},{"a":1}]}');
  });

  // The head is encoded in a scratch array before it is measured: each case after a longer one.
  it.each([
    ['a link of 6,000 characters (beyond the scratch)', `"http://x/cities/?q=${'a'.repeat(6000)}"`],
    [
      'a link of 5,000 non-ASCII characters (3 bytes each, within the scratch)',
      `"http://x/cities/?q=${'名'.repeat(5000)}"`,
    ],
    ['a short ASCII link, after those', '"http://x/cities/?page=2"'],
    ['a link with 2- and 4-byte characters', '"http://x/cities/?q=é😀"'],
    ['no link', 'null'],
  ])('an eagerly assembled page has its whole head: %s', (_, next) => {
    const cities = [Buffer.from('{"a":1}'), Buffer.from('{"b":"ü"}')];
    const bytes = Buffer.concat([...envelopeJson(9, next, 'null', 2, (i) => cities[i]!)]);
    expect(bytes.toString()).toBe(`{"count":9,"next":${next},"previous":null,"results":[{"a":1},{"b":"ü"}]}`);
  });

  it.each([
    ['no cities', 0, 'null', 'null'],
    ['one city', 1, 'null', 'null'],
    ['an eagerly assembled page with links', 7, '"http://x/cities/?page=3"', '"http://x/cities/?page=é"'],
    ['a page produced in parts', 1200, 'null', 'null'],
  ])("resultOffsets finds every city in the envelope's bytes: %s", (_, n, next, previous) => {
    const cities = Array.from({ length: n }, (_, i) => Buffer.from(`{"i":${i},"n":"${'ü'.repeat(i % 900)}"}`));
    const bytes = Buffer.concat([...envelopeJson(n * 3, next, previous, n, (i) => cities[i]!)]);
    const at = resultOffsets(n * 3, next, previous, n, (i) => cities[i]!.length);
    expect(at).toHaveLength(n + 1);
    for (let i = 0; i < n; i++) expect(bytes.subarray(at[i], at[i + 1]! - 1)).toEqual(cities[i]);
    // After the last city (or the empty list's `[`) comes the `]}` that ends the envelope.
    expect(bytes.subarray(at[n]! - (n ? 1 : 0)).toString()).toBe(']}');
  });
});

describe('envelopeStream sends a page in parts of one size, whatever its batches', () => {
  const cities = Array.from({ length: 300 }, (_, i) =>
    new TextEncoder().encode(`{"id":${i},"name":"${'x'.repeat(i * 7)}"}`),
  );
  const whole = (parts: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(parts));
  const batchOf = (held: Uint8Array[]): CityBatch => ({ length: held.length, at: (k) => held[k]! });
  async function* batches(sizes: number[]) {
    let at = 0;
    for (const size of sizes) {
      yield batchOf(cities.slice(at, at + size));
      at += size;
    }
  }
  const expected = whole([...envelopeJson(300, 'null', 'null', 300, (i) => cities[i]!)]);

  it.each([
    ['one batch', [300]],
    ['a city a batch, and empty batches', [...Array.from({ length: 300 }, () => 1), 0, 0]],
    ['uneven batches', [7, 0, 150, 43, 100]],
  ])('%s: envelopeJson’s bytes, every part but the last of the part size', async (_, sizes) => {
    const parts: Uint8Array[] = [];
    // Parts smaller than some cities (up to ~2 KB): a city is cut across parts.
    for await (const part of envelopeStream(
      '{"count":300,"next":null,"previous":null,"results":[',
      batches(sizes),
      new PartPool(1000),
    ))
      parts.push(part);
    expect(whole(parts)).toBe(expected);
    expect(parts.slice(0, -1).every((part) => part.length === 1000)).toBe(true);
    expect(parts.at(-1)!.length).toBeLessThanOrEqual(1000);
  });

  it('no city: the envelope', async () => {
    const parts: Uint8Array[] = [];
    for await (const part of envelopeStream('{"results":[', batches([0]))) parts.push(part);
    expect(whole(parts)).toBe('{"results":[]}');
  });
});
