import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CityTable } from '../src/core/city-table.js';
import { readCsvRows } from '../src/dataset/csv-rows.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { JsonArraySplitter, JsonShapeError } from '../src/dataset/json-records.js';
import { makeCity } from './helpers.js';

const hostile = fc.string({
  unit: fc.constantFrom('a', 'é', '"', '\\', ',', '\n', '\u2028', '𝒜', '{', '}', '[', ']', ':', ' '),
  minLength: 1,
  maxLength: 8,
});

describe('CityTable keeps cities as their serialized bytes', () => {
  it('round-trips cities, names and the dataset file, whatever the text', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(hostile, hostile, fc.boolean()), { maxLength: 20 }), (rows) => {
        const cities = rows.map(([en, ar, top], i) =>
          makeCity(i * 7 - 3, {
            name: 'x',
            name_en: en,
            name_ar: ar,
            top,
            longitude: i ? 1.5 : null,
            latitude: i ? 2 : null,
          }),
        );
        const table = CityTable.fromCities(cities);
        expect(table.toCities()).toEqual(cities);
        expect(table.names('name_en')).toEqual(cities.map((c) => c.name_en));
        expect(table.names('name_ar')).toEqual(cities.map((c) => c.name_ar));
        const file = Buffer.concat([...table.datasetParts()]);
        expect(JSON.parse(file.toString())).toEqual(cities);
        const loaded = CityTable.fromDatasetFile(file);
        expect(loaded.toCities()).toEqual(cities);
        expect([...loaded.ids]).toEqual(cities.map((c) => c.id));
        expect([...loaded.top]).toEqual(cities.map((c) => (c.top ? 1 : 0)));
        // Loaded, the cities lie one after another with one comma between (neighbours copied as one run).
        const { spans, chunks, joined } = loaded.storage();
        expect(joined).toBe(1);
        for (let i = 0; i + 1 < cities.length; i++) {
          expect(spans[3 * i + 2]! + 1).toBe(spans[3 * i + 4]);
          expect(chunks[0]![spans[3 * i + 2]!]).toBe(0x2c);
        }
        const order = Uint32Array.from(cities.keys()).reverse();
        expect(loaded.permuted(order).toCities()).toEqual(cities.toReversed());
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    ['a name that spells the top key', ',"top":true,', false],
    ['a name that spells the longitude key', ',"longitude":1,"latitude":2,"top":false,', true],
  ])('reads top flags back from a dataset file whatever the names: %s', (_, name, top) => {
    const cities = [makeCity(1, { top: true }), makeCity(2, { name_en: name, top }), makeCity(3, { top: false })];
    const loaded = CityTable.fromDatasetFile(Buffer.concat([...CityTable.fromCities(cities).datasetParts()]));
    expect([...loaded.top]).toEqual([1, top ? 1 : 0, 0]);
  });

  it.each([
    ['one digit', 7],
    ['zero', 0],
    ['the largest safe integer', Number.MAX_SAFE_INTEGER],
    ['past the safe integers (read as Number() reads it)', 2 ** 60],
    ['negative', -3],
  ])('reads ids back from a dataset file: %s', (_, id) => {
    const cities = [makeCity(id, { top: true }), makeCity(1)];
    const loaded = CityTable.fromDatasetFile(Buffer.concat([...CityTable.fromCities(cities).datasetParts()]));
    expect([...loaded.ids]).toEqual([id, 1]);
    expect(loaded.toCities()).toEqual(cities);
  });

  it('spreads a large dataset over several buffers', () => {
    const cities = Array.from({ length: 12_000 }, (_, i) => makeCity(i, { name: `${'n'.repeat(20)}${i}` }));
    const table = CityTable.fromCities(cities);
    expect(table.city(11_999)).toEqual(cities[11_999]);
    expect(table.names(NAME_FIELDS[5]!)[7777]).toBe(cities[7777]!.name_fa);
  });

  it.each([4095, 4096, 4097, 8192 + 3, 30_000])(
    "keeps every id, top flag and city of %i cities (across the builder's blocks and chunks)",
    (n) => {
      const cities = Array.from({ length: n }, (_, i) =>
        makeCity(n - i, { name: `${'é'.repeat(i % 50)}${i}`, top: i % 3 === 0 }),
      );
      const table = CityTable.fromCities(cities);
      expect(table.count).toBe(n);
      expect(table.ids).toEqual(Float64Array.from(cities, (c) => c.id));
      expect(table.top).toEqual(Uint8Array.from(cities, (c) => (c.top ? 1 : 0)));
      expect(table.toCities()).toEqual(cities);
    },
  );
});

describe('readers give the same answer however the bytes are chunked', () => {
  const csv = Buffer.from('id,name\r\n1,"two\nlines"\r\n\r\n2,"a ""q"""\n\n3,é\n');
  const split = (bytes: Buffer, at: number[]) =>
    at.map((end, i) => bytes.subarray(at[i - 1] ?? 0, end)).concat([bytes.subarray(at.at(-1) ?? 0)]);

  it('CSV rows keep their physical lines', async () => {
    for (let cut = 1; cut < csv.length; cut++) {
      const rows: [number, string[]][] = [];
      await readCsvRows(split(csv, [cut]), ({ line, values }) => void rows.push([line, [...values]]));
      expect(rows, `cut at ${cut}`).toEqual([
        [1, ['id', 'name']],
        [2, ['1', 'two\nlines']],
        [5, ['2', 'a "q"']],
        [7, ['3', 'é']],
      ]);
    }
  });

  const json = Buffer.from('\ufeff[\n {"a": "x,]}\\"y"},\n [1, {"b": [2]}],\n "s",\n 3\n]\n');
  it('JSON array elements and their lines', () => {
    for (let cut = 1; cut < json.length; cut++) {
      const elements: [string, number, number][] = [];
      const splitter = new JsonArraySplitter((text, index, line) => void elements.push([text.trim(), index, line]));
      for (const chunk of split(json, [cut])) splitter.push(chunk);
      splitter.end();
      expect(elements, `cut at ${cut}`).toEqual([
        ['{"a": "x,]}\\"y"}', 0, 2],
        ['[1, {"b": [2]}]', 1, 3],
        ['"s"', 2, 4],
        ['3', 3, 5],
      ]);
    }
  });

  it.each([['[]'], [' [ ] '], ['\ufeff[]']])('empty array %j', (text) => {
    const splitter = new JsonArraySplitter(() => expect.fail('no element'));
    splitter.push(Buffer.from(text));
    expect(() => splitter.end()).not.toThrow();
  });

  it.each([['{}'], ['[1,]'], ['[,1]'], ['[1] x'], ['[1'], ['[{"a":1]']])('not an array: %j', (text) => {
    const splitter = new JsonArraySplitter(() => {});
    expect(() => {
      splitter.push(Buffer.from(text));
      splitter.end();
    }).toThrow(JsonShapeError);
  });
});
