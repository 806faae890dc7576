import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { CityIndex } from '../src/core/city-index.js';
import type { Collation } from '../src/core/collation.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { ROUTES } from '../src/core/route-table.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { chunkPath, CHUNK_CITIES, edgeFileCount, edgeFiles, rankPath, type EdgeIndex } from '../src/site/edge-files.js';
import { chunkParts, decodeChunk, decodeRanks, encodeRanks, isGroupStart, tagBytes } from '../src/site/edge-format.js';
import { bodyBytes } from '../src/core/page.js';
import { KIT, makeCity, tempDir } from './helpers.js';
import { CityTable } from '../src/core/city-table.js';

const TAG = '0123456789abcdef';
const KIT_DATASETS = ['cities48', 'cities11', 'empty', 'cities1234', 'prefixed30'];

async function filesOf(index: CityIndex): Promise<Map<string, Uint8Array>> {
  return new Map([...edgeFiles(index, TAG)].map((f) => [f.path, new Uint8Array(bodyBytes(f.body))]));
}

describe('edgeFiles: the collation and the cities as the edge reads them', () => {
  const cases: [string, Collation][] = [
    ...KIT_DATASETS.map((name): [string, Collation] => [name, 'codepoint']),
    ['cities48', 'locale'],
    ['cities1234', 'locale'],
  ];
  it.each(cases)(
    '%s (%s): each rank file is the ascending order with its groups of equal values, the chunks hold every city in dataset order',
    async (name, collation) => {
      const index = new CityIndex(await readDataset(join(KIT, `${name}.json`)), collation);
      const files = await filesOf(index);
      const tag = tagBytes(TAG);
      expect(files.size).toBe(edgeFileCount(index.count));
      const head = JSON.parse(new TextDecoder().decode(files.get(ROUTES.edge.index))) as EdgeIndex;
      expect(head).toEqual({
        format: 1,
        count: index.count,
        chunkCities: CHUNK_CITIES,
        tag: TAG,
        distinct: Object.fromEntries(NAME_FIELDS.map((f) => [f, index.distinct(f)])),
      });
      for (const field of NAME_FIELDS) {
        const { order, groupStarts } = decodeRanks(files.get(rankPath(field))!, tag, field);
        const { ranks } = index.ranks(field);
        expect([...order]).toEqual([...index.single([{ field, descending: false }])]);
        expect(order.map((_, i) => +isGroupStart(groupStarts, i))).toEqual(
          order.map((p, i) => +(i === 0 || ranks[p] !== ranks[order[i - 1]!])),
        );
      }
      expect([...decodeRanks(files.get(rankPath(ROUTES.absent))!, tag, 'default').order]).toEqual([
        ...index.single([]),
      ]);
      const cities: string[] = [];
      for (let c = 0; files.has(chunkPath(c)); c++) {
        const chunk = decodeChunk(files.get(chunkPath(c))!, tag, 'chunk');
        for (let i = 0; i < chunk.count; i++) cities.push(new TextDecoder().decode(chunk.city(i)));
      }
      expect(cities).toEqual(Array.from({ length: index.count }, (_, i) => Buffer.from(index.json(i)).toString()));
    },
  );

  it('the same data gives the same bytes; another tag only changes the headers and the index', async () => {
    const index = () =>
      new CityIndex(
        CityTable.fromCities(Array.from({ length: 600 }, (_, i) => makeCity(600 - i, { name: `C${i % 7}` }))),
        'codepoint',
      );
    const [a, b] = [await filesOf(index()), await filesOf(index())];
    expect([...a.keys()]).toEqual([...b.keys()]);
    for (const [path, bytes] of a) expect(Buffer.from(b.get(path)!).equals(bytes)).toBe(true);
    expect([...a.keys()].filter((p) => p.startsWith('_cities-api/edge/chunks/'))).toEqual([0, 1, 2].map(chunkPath));
  });
});

describe('edge-format refuses files it cannot trust', () => {
  const tag = tagBytes(TAG);
  const ranks = encodeRanks(Uint32Array.of(2, 0, 1), (i) => i !== 2, tag);
  const chunk = bodyBytes(
    chunkParts([new TextEncoder().encode('{"id":1}'), new TextEncoder().encode('{"id":2}')], tag),
  );
  it.each<[string, () => unknown, RegExp]>([
    [
      'a file of another build',
      () => decodeRanks(ranks, tagBytes('ffffffffffffffff'), 'r.bin'),
      /r\.bin is from another build than the edge index/,
    ],
    [
      'a file that is not ours',
      () => decodeChunk(new TextEncoder().encode('<html>not found</html>'), tag, 'c.bin'),
      /c\.bin cannot be read: it is not an edge data file/,
    ],
    [
      'a truncated rank file',
      () => decodeRanks(ranks.subarray(0, ranks.length - 2), tag, 'r.bin'),
      /shorter than its header says/,
    ],
    [
      'a chunk with bytes past its cities',
      () => decodeChunk(Uint8Array.of(...chunk, 0x20), tag, 'c.bin'),
      /its cities end elsewhere/,
    ],
    ['a malformed tag', () => tagBytes('xyz'), /invalid edge data tag/],
  ])('%s', (_, read, message) => expect(read).toThrow(message));

  it("a chunk file is given as parts (never joined by the writer): its header, then the table's own city bytes, not copies", async () => {
    const index = new CityIndex(await readDataset(join(KIT, 'cities48.json')), 'codepoint');
    const entry = [...edgeFiles(index, TAG)].find((f) => f.path === chunkPath(0))!;
    const parts = [...entry.body];
    const cities = Array.from({ length: index.count }, (_, i) => index.json(i));
    expect(Array.isArray(entry.body)).toBe(false);
    expect(
      parts.slice(1).every((part, i) => part.buffer === cities[i]!.buffer && part.byteOffset === cities[i]!.byteOffset),
    ).toBe(true);
    const read = decodeChunk(bodyBytes(parts), tag, 'c.bin');
    expect(Array.from({ length: read.count }, (_, i) => Buffer.from(read.city(i)).toString())).toEqual(
      cities.map((c) => Buffer.from(c).toString()),
    );
  });

  it('reads what it wrote, also from an unaligned view', () => {
    const shifted = new Uint8Array(ranks.length + 1);
    shifted.set(ranks, 1);
    const { order, groupStarts } = decodeRanks(shifted.subarray(1), tag, 'r.bin');
    expect([[...order], [0, 1, 2].map((i) => isGroupStart(groupStarts, i))]).toEqual([
      [2, 0, 1],
      [true, true, false],
    ]);
    expect(new TextDecoder().decode(decodeChunk(chunk, tag, 'c.bin').city(1))).toBe('{"id":2}');
  });
});

describe('a build writes the edge data as site files, listed in the manifest', () => {
  const temp = tempDir('edge-files-');
  afterAll(async () => (await temp).cleanup());
  it('cities48: the files edgeFiles gives, with the tag of the dataset and collation, not compressed', async () => {
    const out = join((await temp).dir, 'site');
    await build({
      data: join(KIT, 'cities48.csv'),
      out,
      baseUrl: 'http://api.example.com',
      collation: 'codepoint',
      pageSizes: [10],
    });
    const manifest = JSON.parse(await readFile(join(out, ROUTES.extras.manifest), 'utf8')) as {
      files: Record<string, string>;
    };
    const head = JSON.parse(await readFile(join(out, ROUTES.edge.index), 'utf8')) as EdgeIndex;
    const expected = await filesOf(new CityIndex(await readDataset(join(KIT, 'cities48.csv')), 'codepoint'));
    for (const path of [ROUTES.edge.index, ...NAME_FIELDS.map(rankPath), rankPath(ROUTES.absent), chunkPath(0)]) {
      expect(manifest.files[path], path).toMatch(/^[0-9a-f]{64}$/);
      const bytes = await readFile(join(out, path));
      if (path !== ROUTES.edge.index)
        expect(bytes.subarray(16).equals(expected.get(path)!.subarray(16)), path).toBe(true);
      await expect(readFile(join(out, `${path}.gz`))).rejects.toThrow(/ENOENT/);
    }
    expect(head.tag).toMatch(/^[0-9a-f]{16}$/);
    await build({
      data: join(KIT, 'cities48.csv'),
      out,
      baseUrl: 'http://api.example.com',
      collation: 'locale',
      pageSizes: [10],
    });
    expect((JSON.parse(await readFile(join(out, ROUTES.edge.index), 'utf8')) as EdgeIndex).tag).not.toBe(head.tag);
  });
});
