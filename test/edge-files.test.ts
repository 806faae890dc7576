import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { CityIndex } from '../src/core/city-index.js';
import type { Collation } from '../src/core/collation.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { ROUTES } from '../src/core/route-table.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import {
  BLOCK_BYTES,
  blockPath,
  edgeFileCount,
  edgeFiles,
  LAYOUTS,
  rankPath,
  type EdgeIndex,
  type Layout,
} from '../src/site/edge-files.js';
import { blockParts, decodeBlock, decodeRanks, encodeRanks, isGroupStart, tagBytes } from '../src/site/edge-format.js';
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
    '%s (%s): each rank file is the ascending order with its groups of equal values, each layout holds every city in its order',
    async (name, collation) => {
      const index = new CityIndex(await readDataset(join(KIT, `${name}.json`)), collation);
      const files = await filesOf(index);
      const tag = tagBytes(TAG);
      expect(files.size).toBeLessThanOrEqual(edgeFileCount(index.count, index.table.jsonBytes()));
      const head = JSON.parse(new TextDecoder().decode(files.get(ROUTES.edge.index))) as EdgeIndex;
      expect({ ...head, layouts: undefined }).toEqual({
        format: 2,
        count: index.count,
        tag: TAG,
        distinct: Object.fromEntries(NAME_FIELDS.map((f) => [f, index.distinct(f)])),
        layouts: undefined,
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
      for (const layout of LAYOUTS) {
        const ordering = layout === ROUTES.absent ? [] : [{ field: layout, descending: false }];
        const want = [...index.single(ordering)].map((p) => Buffer.from(index.json(p)).toString());
        expect(layoutCities(files, head, layout, tag), layout).toEqual(want);
      }
    },
  );

  it('a layout is cut into blocks of at most BLOCK_BYTES of cities; fields of one order share one layout', () => {
    const long = 'x'.repeat(900);
    const index = new CityIndex(
      CityTable.fromCities(Array.from({ length: 1500 }, (_, i) => makeCity(i + 1, { name: `C${i % 97} ${long}` }))),
      'codepoint',
    );
    const files = [...edgeFiles(index, TAG)];
    const head = JSON.parse(Buffer.from(bodyBytes(files.at(-1)!.body)).toString()) as EdgeIndex;
    const starts = head.layouts.name_ar as number[];
    expect(starts.length).toBeGreaterThan(5);
    for (let b = 0; b < starts.length; b++) {
      const bytes = bodyBytes(files.find((f) => f.path === blockPath('name_ar', b))!.body);
      expect(bytes.length - 16 - 4 * ((starts[b + 1] ?? 1500) - starts[b]!)).toBeLessThanOrEqual(BLOCK_BYTES);
    }
    // One name in every language, no top city: every layout is name_ar's (the first written).
    expect(LAYOUTS.filter((l) => l !== 'name_ar').map((l) => head.layouts[l])).toEqual(
      LAYOUTS.slice(2)
        .concat(ROUTES.absent)
        .map(() => 'name_ar'),
    );
    expect(files.some((f) => f.path.startsWith('_cities-api/edge/rows/name_fr-'))).toBe(false);
  });

  it('the same data gives the same bytes; another tag only changes the headers and the index', async () => {
    const index = () =>
      new CityIndex(
        CityTable.fromCities(Array.from({ length: 600 }, (_, i) => makeCity(600 - i, { name: `C${i % 7}` }))),
        'codepoint',
      );
    const [a, b] = [await filesOf(index()), await filesOf(index())];
    expect([...a.keys()]).toEqual([...b.keys()]);
    for (const [path, bytes] of a) expect(Buffer.from(b.get(path)!).equals(bytes)).toBe(true);
    expect([...a.keys()].filter((p) => p.includes('/rows/')).length).toBeGreaterThan(0);
  });
});

/** The cities of a layout, read from its blocks (or those of the layout it names). */
function layoutCities(files: Map<string, Uint8Array>, head: EdgeIndex, layout: Layout, tag: Uint8Array): string[] {
  const entry = head.layouts[layout];
  const own = typeof entry === 'string' ? entry : layout;
  const cities: string[] = [];
  for (let b = 0; files.has(blockPath(own, b)); b++) {
    const block = decodeBlock(files.get(blockPath(own, b))!, tag, 'block');
    for (let i = 0; i < block.count; i++) cities.push(new TextDecoder().decode(block.city(i)));
  }
  return cities;
}

describe('edge-format refuses files it cannot trust', () => {
  const tag = tagBytes(TAG);
  const ranks = encodeRanks(Uint32Array.of(2, 0, 1), (i) => i !== 2, tag);
  const chunk = bodyBytes(
    blockParts([new TextEncoder().encode('{"id":1}'), new TextEncoder().encode('{"id":2}')], tag),
  );
  it.each<[string, () => unknown, RegExp]>([
    [
      'a file of another build',
      () => decodeRanks(ranks, tagBytes('ffffffffffffffff'), 'r.bin'),
      /r\.bin is from another build than the edge index/,
    ],
    [
      'a file that is not ours',
      () => decodeBlock(new TextEncoder().encode('<html>not found</html>'), tag, 'c.bin'),
      /c\.bin cannot be read: it is not an edge data file/,
    ],
    [
      'a truncated rank file',
      () => decodeRanks(ranks.subarray(0, ranks.length - 2), tag, 'r.bin'),
      /shorter than its header says/,
    ],
    [
      'a block with bytes past its cities',
      () => decodeBlock(Uint8Array.of(...chunk, 0x20), tag, 'c.bin'),
      /its cities end elsewhere/,
    ],
    ['a malformed tag', () => tagBytes('xyz'), /invalid edge data tag/],
  ])('%s', (_, read, message) => expect(read).toThrow(message));

  it("a block file is given as parts (never joined by the writer): its header, then the table's own city bytes, not copies", async () => {
    const index = new CityIndex(await readDataset(join(KIT, 'cities48.json')), 'codepoint');
    const entry = [...edgeFiles(index, TAG)].find((f) => f.path === blockPath('default', 0))!;
    const parts = [...entry.body];
    const cities = [...index.single([])].map((p) => index.json(p));
    expect(Array.isArray(entry.body)).toBe(false);
    expect(
      parts.slice(1).every((part, i) => part.buffer === cities[i]!.buffer && part.byteOffset === cities[i]!.byteOffset),
    ).toBe(true);
    const read = decodeBlock(bodyBytes(parts), tag, 'c.bin');
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
    expect(new TextDecoder().decode(decodeBlock(chunk, tag, 'c.bin').city(1))).toBe('{"id":2}');
  });
});

describe('a build writes the edge data as site files, listed in the manifest', () => {
  const temp = tempDir('edge-files-');
  afterAll(async () => (await temp).cleanup());
  it('cities48: the files edgeFiles gives (the cities in the default order, as a build holds them), with the tag of the dataset and collation, not compressed', async () => {
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
    const expected = await filesOf(
      new CityIndex(await readDataset(join(KIT, 'cities48.csv')), 'codepoint').inDefaultOrder(),
    );
    for (const path of [
      ROUTES.edge.index,
      ...NAME_FIELDS.map(rankPath),
      rankPath(ROUTES.absent),
      blockPath('default', 0),
    ]) {
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
