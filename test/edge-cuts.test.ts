import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { PRECOMPUTABLE_ORDERINGS } from '../src/core/ordering.js';
import { bodyBytes } from '../src/core/page.js';
import { CLOUDFLARE_FREE, FINE_BLOCKS, firstPagesFor, hostBudget } from '../src/site/asset-budget.js';
import { BLOCK_BYTES, blockStarts, LARGE_GROUP_BYTES } from '../src/site/edge-cuts.js';
import { edgeFiles, type EdgeIndex } from '../src/site/edge-files.js';
import { countSiteFiles, type Sized } from '../src/site/size.js';
import { makeCity } from './helpers.js';

// Where the edge data's blocks start (site/edge-cuts.ts), and the fine block size a site for
// Cloudflare takes within its file budget (site/asset-budget.ts hostBudget).

/** Cities as [bytes, group] pairs: consecutive cities of one group tie. */
const cut = (cities: [number, string][], fine?: number) =>
  blockStarts(
    cities.length,
    (i) => cities[i]![0],
    (i) => i === 0 || cities[i]![1] !== cities[i - 1]![1],
    fine,
  );
/** `n` cities of `bytes` each in group `g`. */
const run = (n: number, bytes: number, g: string): [number, string][] => Array.from({ length: n }, () => [bytes, g]);

describe('blockStarts: coarse blocks of at most BLOCK_BYTES, large tie groups in fine blocks of their own', () => {
  it.each<[string, [number, string][], number | undefined, number[]]>([
    ['no city: no block', [], undefined, []],
    ['no city, fine asked: no block', [], 16_000, []],
    ['coarse: as many cities as fit in BLOCK_BYTES', run(7, 100_000, 'a'), undefined, [0, 2, 4, 6]],
    ['coarse: a block exactly BLOCK_BYTES full', run(4, BLOCK_BYTES / 2, 'a'), undefined, [0, 2]],
    [
      'coarse: a city larger than a block has one of its own',
      [...run(1, 10, 'a'), ...run(1, 300_000, 'b'), ...run(2, 10, 'c')],
      undefined,
      [0, 1, 2],
    ],
    // Groups of at most LARGE_GROUP_BYTES stay as coarse blocks cut them.
    [
      'fine asked, no large group: the coarse blocks',
      run(7, 50_000, 'x').map(([b], i): [number, string] => [b, `g${i}`]),
      16_000,
      [0, 4],
    ],
    [
      'a group of exactly LARGE_GROUP_BYTES is not cut',
      [...run(3, 1_000, 'a'), ...run(6, LARGE_GROUP_BYTES / 6, 'b'), ...run(3, 1_000, 'c')],
      4_000,
      [0],
    ],
    [
      'a group one byte over LARGE_GROUP_BYTES is: its own fine blocks, the coarse block before it ends there',
      [...run(3, 1_000, 'a'), ...run(5, LARGE_GROUP_BYTES / 5, 'b'), ...run(1, 1, 'b'), ...run(3, 1_000, 'c')],
      24_000,
      [0, 3, 5, 7, 9],
    ],
    [
      'a large group first, then small ones in a coarse block',
      [...run(10, 10_000, 'a'), ...run(5, 1_000, 'b'), ...run(5, 1_000, 'c')],
      30_000,
      [0, 3, 6, 9, 10],
    ],
    ['a large group last', [...run(5, 1_000, 'a'), ...run(8, 10_000, 'b')], 20_000, [0, 5, 7, 9, 11]],
    [
      'two large groups side by side: each its own blocks',
      [...run(7, 10_000, 'a'), ...run(7, 10_000, 'b')],
      30_000,
      [0, 3, 6, 7, 10, 13],
    ],
    [
      'in a large group, a city larger than a fine block has one of its own',
      [...run(2, 5_000, 'a'), ...run(1, 70_000, 'a'), ...run(2, 5_000, 'a')],
      16_000,
      [0, 2, 3],
    ],
    ['the default ordering grouped as a whole: every block fine', run(20, 4_000, 'a'), 16_000, [0, 4, 8, 12, 16]],
  ])('%s', (_, cities, fine, starts) => expect(cut(cities, fine)).toEqual(starts));

  // Fine blocks hold their cities compact (edge-files.ts): a large group is told by its cities' JSON
  // bytes, its fine blocks filled by their compact bytes, and numbered for the writer.
  it.each<[string, number, number[], number[]]>([
    [
      'compact cities of 250 bytes: 16 a fine block of 4 KB',
      250,
      [0, 3, 19, 35, 51, 67, 83, 99, 103],
      [1, 2, 3, 4, 5, 6, 7],
    ],
    [
      'compact cities as large as their JSON: as without',
      1_000,
      [0, ...Array.from({ length: 25 }, (_, b) => 3 + 4 * b), 103],
      Array.from({ length: 25 }, (_, b) => 1 + b),
    ],
  ])('%s', (_, compact, starts, fine) => {
    const cities = [...run(3, 1_000, 'a'), ...run(100, 1_000, 'b'), ...run(3, 1_000, 'c')];
    const blocks: number[] = [];
    const group = (i: number) => cities[i]![1];
    const got = blockStarts(
      cities.length,
      (i) => cities[i]![0],
      (i) => i === 0 || group(i) !== group(i - 1),
      4_000,
      {
        bytes: () => compact,
        blocks,
      },
    );
    expect({ starts: got, fine: blocks }).toEqual({ starts, fine });
  });

  // 3,000 cities of 200-3,200 bytes in consecutive groups of 1 to 400 cities: large and small ones mixed.
  const GROUP_SIZES = [1, 400, 3, 40, 250, 1, 1, 120, 7, 300];
  const mixed: [number, string][] = [];
  for (let g = 0; mixed.length < 3_000; g++)
    for (let k = 0; k < GROUP_SIZES[g % GROUP_SIZES.length]! && mixed.length < 3_000; k++)
      mixed.push([200 + ((mixed.length * 7919) % 3_001), `g${g}`]);
  const groupBytes = (g: string) => mixed.filter(([, h]) => h === g).reduce((n, [b]) => n + b, 0);

  it.each([16_000, 40_000, 160_000])(
    'fine %d: each block one city or within its size (fine in a large group, else BLOCK_BYTES), a large group in blocks of its own',
    (fine) => {
      const starts = cut(mixed, fine);
      expect(starts[0]).toBe(0);
      starts.forEach((s, b) => {
        const block = mixed.slice(s, starts[b + 1] ?? mixed.length);
        const large = block.filter(([, g]) => groupBytes(g) > LARGE_GROUP_BYTES);
        // A block holding a large group's cities holds no other city.
        expect(large.length === 0 || block.every(([, g]) => g === block[0]![1])).toBe(true);
        const bytes = block.reduce((n, [c]) => n + c, 0);
        expect(block.length === 1 || bytes <= (large.length ? fine : BLOCK_BYTES)).toBe(true);
      });
      expect(starts.some((s, b) => (starts[b + 1] ?? mixed.length) - s > 1)).toBe(true);
    },
  );
});

/**
 * `n` cities of which those of `tied` names share name_de (the rest each their own): a tie group of
 * ~tied x 500 bytes. `distinct`: each name of a city its own, ~60 characters (~1,300 bytes of JSON, ~1,000
 * compact: no value repeats one of its city's, so compaction drops little more than the keys).
 */
function index(n: number, tied: number, distinct = false): CityIndex {
  const names = (i: number) =>
    distinct
      ? Object.fromEntries(NAME_FIELDS.map((field) => [field, `${field} ${i} ${'x'.repeat(50)}`]))
      : { name: `City ${(i * 7919) % n}` };
  return new CityIndex(
    CityTable.fromCities(
      Array.from({ length: n }, (_, i) => makeCity(i + 1, { ...names(i), name_de: i < tied ? 'Same' : `City ${i}` })),
    ),
    'codepoint',
  );
}

const shape = (count: number, pageSizes: number[]): Omit<Sized, 'firstPages' | 'edgeFiles'> => ({
  count,
  pageSizes,
  // Every ordering unless the page sizes are many (a budget left tight, to the file).
  orderings: pageSizes.length > 4 ? PRECOMPUTABLE_ORDERINGS.slice(0, 1) : PRECOMPUTABLE_ORDERINGS,
  compression: 'none',
  mount: '',
});
/** The files edgeFiles writes for `fine`, and the blocks its index lists. */
const written = (idx: CityIndex, fine: number | undefined) => {
  const files = [...edgeFiles(idx, '0123456789abcdef', fine)];
  const head = JSON.parse(Buffer.from(bodyBytes(files.at(-1)!.body)).toString()) as EdgeIndex;
  return { files: files.length, head };
};
/** Page sizes 1..n: 2 files a list (its first page and its last), a way to leave a budget of a few files to edge files. */
const sizes = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('hostBudget: the smallest fine blocks that leave each list its first page, then the first pages that fit', () => {
  // 10,000 cities of about 490 bytes (about 115 compact, one name in 15 languages): 60 edge files without fine
  // blocks, 273 with fine blocks of 4 KB, 159 with 8 KB, 135 with 10 KB, 63 with 48 KB, 50 with 160 KB (fewer
  // than without: a fine block of compact cities holds more of them than a 240 KB block of JSON).
  it.each<[string, number, number, number[], number | undefined, boolean?]>([
    ['no tie group over LARGE_GROUP_BYTES: nothing cut finer', 2_000, 100, [10, 20, 50, 100], undefined],
    ['a large group and room: the smallest fine blocks', 10_000, 8_000, [10, 20, 50, 100], FINE_BLOCKS[0]],
    // One ordering of 9,926 lists, each its first page and its last: 143 files left, 10 KB blocks fit, 8 KB ones do not.
    ['a large group and a tight budget: larger fine blocks', 10_000, 8_000, sizes(9_925), 10_000],
    // 63 left: 48 KB blocks, about as many files as the coarse blocks (which fit wherever these do).
    [
      'a budget the coarse blocks nearly fill: fine blocks of compact cities still fit',
      10_000,
      8_000,
      sizes(9_965),
      48_000,
    ],
    // 3,000 cities of distinct names: 52 edge files without fine blocks, 56 with fine blocks of 160 KB (the
    // fewest: compact, the cities take ~80 % of their JSON). 54 left: the coarse blocks fit, no fine size does.
    ['no fine size fits: coarse blocks', 3_000, 2_400, sizes(9_970), undefined, true],
  ])('%s', (_, n, tied, pageSizes, fine, distinct) => {
    const idx = index(n, tied, distinct);
    const s = shape(n, pageSizes);
    const budget = hostBudget('cloudflare', s, idx);
    expect(budget.fineBlockBytes).toBe(fine);
    // The edge files counted are those written, the blocks of the index among them.
    const { files, head } = written(idx, budget.fineBlockBytes);
    expect(budget.edgeFiles).toBe(files);
    const blocks = Object.values(head.layouts).filter(Array.isArray).flat().length;
    expect(files).toBe(1 + 17 + blocks);
    expect(budget.firstPages).toBe(firstPagesFor('cloudflare', { ...s, edgeFiles: files }, 0));
    const site = { ...s, host: 'cloudflare' as const, edgeFiles: files };
    expect(countSiteFiles({ ...site, firstPages: budget.firstPages })).toBeLessThanOrEqual(CLOUDFLARE_FREE.files);
    // A smaller fine size (any, when none was taken for a large group) would leave some list without its first page.
    if (tied > 1_000)
      for (const f of FINE_BLOCKS.filter((f) => f < (fine ?? Number.POSITIVE_INFINITY)))
        expect(countSiteFiles({ ...site, edgeFiles: written(idx, f).files, firstPages: 1 })).toBeGreaterThan(
          CLOUDFLARE_FREE.files,
        );
  });
});
