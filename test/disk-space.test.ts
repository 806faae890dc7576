import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultMinFree, diskSpace, spaceShortage, SpaceGuard, type DiskSpace } from '../src/store/disk-space.js';
import { parseMinFree } from '../src/site/spec.js';
import { inFlags } from '../src/cli/options.js';
import { CitiesApiError } from '../src/core/errors.js';
import { bytesOnDisk, estimateSiteSize } from '../src/site/size.js';
import { reusableShape, type Reusable } from '../src/site/reusable.js';
import { edgeBytes, edgeFileCount } from '../src/site/edge-files.js';
import { writeSite } from '../src/store/site-writer.js';
import { cli } from './cli-helpers.js';
import { siteLeftovers, treeDifferences } from './crash-helpers.js';
import { readTree, tempDir } from './helpers.js';

const ROOT = join(import.meta.dirname, '..');
let cwd: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: cwd, cleanup } = await tempDir('cities-space-'));
  await cp(join(ROOT, 'data'), join(cwd, 'data'), { recursive: true });
});
afterAll(() => cleanup());

const GB = 1e9;
const disk = (free: number, more: Partial<DiskSpace> = {}): DiskSpace => ({
  path: '/srv',
  free,
  freeInodes: 10_000_000,
  inodes: 20_000_000,
  total: 100 * GB,
  blockSize: 4096,
  ...more,
});
/** The 140k-city site of the README: 426,081 files, 1.44 GB of JSON and 0.49 GB of .gz/.br. */
const big = { files: 426_081, jsonBytes: 1.44 * GB, compressedBytes: 0.49 * GB };

describe('bytesOnDisk: the estimate + 10 %, and three quarters of a block per file', () => {
  it.each([
    ['no file', { files: 0, jsonBytes: 0, compressedBytes: 0 }, 4096, 0],
    ['one small file on 4 KB blocks', { files: 1, jsonBytes: 100, compressedBytes: 0 }, 4096, 110 + 3072],
    [
      'the 30k-city site (436.2 MB in 94,566 files; du: 722.5 MB)',
      { files: 94_566, jsonBytes: 436_209_296, compressedBytes: 0 },
      4096,
      Math.round(436_209_296 * 1.1 + 94_566 * 3072),
    ],
    ['the 140k-city site on 4 KB blocks', big, 4096, Math.round(1.93 * GB * 1.1 + 426_081 * 3072)],
  ])('%s', (_, size, block, expected) => {
    expect(bytesOnDisk(size, block)).toBe(expected);
  });
});

describe('spaceShortage: a build must fit beside the old site and leave the margin', () => {
  const need = bytesOnDisk(big, 4096);
  it.each<[string, DiskSpace, typeof big | null, number, RegExp | null]>([
    ['fits with room to spare', disk(10 * GB), null, GB, null],
    ['fits exactly with the margin', disk(need + GB), null, GB, null],
    [
      'one byte short of the margin',
      disk(need + GB - 1),
      null,
      GB,
      /the site needs about 3.4 GB \(426,081 files; the estimate \+ 10 %\) and a build leaves 1\.0 GB free \(--min-free\), but the filesystem of \/srv has 4.4 GB free\./,
    ],
    [
      'a 15 GB site on a 10 GB disk',
      disk(10 * GB),
      { files: 3_749_532, jsonBytes: 14 * GB, compressedBytes: 5 * GB },
      0,
      /needs about 32.4 GB .* has 10\.0 GB free/,
    ],
    ['what the old site can reuse costs nothing (hard links)', disk(1.5 * GB), null, 0.1 * GB, null],
    [
      'too few inodes, whatever the bytes',
      disk(100 * GB, { freeInodes: 400_000 }),
      null,
      0,
      /and 400,000 free inodes for 426,081 files/,
    ],
    [
      'a filesystem without an inode count (btrfs) has no inode limit',
      disk(100 * GB, { freeInodes: 0, inodes: 0 }),
      null,
      0,
      null,
    ],
  ])('%s', (name, space, site, keep, message) => {
    const reusable = name.startsWith('what the old site')
      ? { files: 400_000, jsonBytes: 1.4 * GB, compressedBytes: 0.45 * GB }
      : null;
    // In the CLI's words (the message names its options by their keys: core/errors.ts).
    const marked = spaceShortage(space, site ?? big, reusable, keep);
    const shortage = marked && inFlags(new CitiesApiError(marked));
    if (message) expect(shortage).toMatch(message);
    else expect(shortage).toBeNull();
    if (shortage)
      expect(shortage).toMatch(
        /To fit: free some space, .* or lower --min-free \(0 keeps no margin\)\. Nothing was written\.$/,
      );
  });

  it('says when the old site’s files were counted as reusable', () => {
    expect(spaceShortage(disk(0.01 * GB), big, { files: 1000, jsonBytes: 1e6, compressedBytes: 0 }, 0)).toMatch(
      /needs about .* beyond what it can reuse of the old site/,
    );
  });
});

describe('reusableShape: at most the pages both sites precompute', () => {
  const site: Reusable = {
    count: 1000,
    baseUrl: 'http://x',
    mount: '',
    collation: 'locale',
    defaultPageSize: 10,
    pageSizes: [20, 50],
    orderings: ['default', 'name_en'],
    compression: 'fast',
  };
  const both = ['default', 'name_en'];
  it.each<[string, Partial<Reusable>, ReturnType<typeof reusableShape>]>([
    [
      'the same site: all of it',
      {},
      { count: 1000, pageSizes: [20, 50], orderings: both, compression: 'fast', mount: '', pagesOnly: true },
    ],
    [
      'fewer cities, another page size, one more ordering',
      { count: 800, pageSizes: [50, 100], orderings: ['default', 'name_en', 'name_fr'] },
      { count: 800, pageSizes: [50], orderings: both, compression: 'fast', mount: '', pagesOnly: true },
    ],
    [
      'an uncompressed old site: its pages only',
      { compression: 'none' },
      { count: 1000, pageSizes: [20, 50], orderings: both, compression: 'none', mount: '', pagesOnly: true },
    ],
    [
      'an old site compressed at another level: its pages only (every .gz/.br is made anew)',
      { compression: 'best' },
      { count: 1000, pageSizes: [20, 50], orderings: both, compression: 'none', mount: '', pagesOnly: true },
    ],
    ['another base URL: every link differs, nothing', { baseUrl: 'http://y' }, null],
    ['another collation: nothing', { collation: 'codepoint' }, null],
    ['no ordering in common: nothing', { orderings: ['-name_en'] }, null],
  ])('%s', (_, old, expected) => {
    expect(reusableShape({ ...site, ...old }, site)).toEqual(expected);
  });

  // A rebuild after a city changed rewrites the dataset file and every edge file: only pages can be
  // reused (1000 cities; 101 + 51 + 21 pages and the page of all, 2 orderings, each with .gz and .br).
  const reused = (old: Partial<Reusable>) =>
    estimateSiteSize(reusableShape({ ...site, ...old }, site)!, 600_000, 8, 0.2);
  it.each<[string, () => number, number]>([
    ['its files: the pages alone, not the extras nor the edge files', () => reused({}).files, 174 * 2 * 3],
    ['its bytes: no dataset file nor edge data', () => reused({}).dataBytes, 0],
    [
      'an old site built for Cloudflare: no page of all cities',
      () => reused({ host: 'cloudflare' }).files,
      173 * 2 * 3,
    ],
    [
      "an old site holding each list's first 5 pages: those and the last",
      () => reused({ host: 'cloudflare', firstPages: 5 }).files,
      (6 + 6 + 6) * 2 * 3,
    ],
  ])("the old site's reusable share, %s", (_, value, expected) => expect(value()).toBe(expected));

  // A rebuild of the very dataset with other settings: its dataset file (601 bytes a city here) and,
  // cut alike, its edge data are the old site's bytes, hard-linked; only the pages differ.
  const DATASET = { files: 1, bytes: 601 * 1000 };
  const EDGE = { files: edgeFileCount(1000, 600_000), bytes: edgeBytes(1000, 600_000) };
  const none = { files: 0, bytes: 0 };
  /** The data files and bytes of the reusable share, beyond its pages (pages: as for another dataset). */
  const reusedData = (old: Partial<Reusable>, sameDataset: boolean) => {
    const shape = reusableShape({ ...site, ...old }, site, sameDataset);
    const pages = reusableShape({ ...site, ...old }, site);
    const size = (of: typeof shape) => (of ? estimateSiteSize(of, 600_000, 8, 0.2) : { files: 0, dataBytes: 0 });
    return { files: size(shape).files - size(pages).files, bytes: size(shape).dataBytes };
  };
  it.each<[string, Partial<Reusable>, boolean, { files: number; bytes: number }]>([
    [
      'the same dataset, another page size: its dataset file and edge data',
      { pageSizes: [20, 100] },
      true,
      {
        files: DATASET.files + EDGE.files,
        bytes: DATASET.bytes + EDGE.bytes,
      },
    ],
    [
      'the same dataset, other orderings: the same',
      { orderings: ['default', 'name_fr'] },
      true,
      {
        files: DATASET.files + EDGE.files,
        bytes: DATASET.bytes + EDGE.bytes,
      },
    ],
    [
      'the same dataset, another base URL (no page in common): the same',
      { baseUrl: 'http://y' },
      true,
      {
        files: DATASET.files + EDGE.files,
        bytes: DATASET.bytes + EDGE.bytes,
      },
    ],
    [
      'the same dataset, another collation: its dataset file (the edge data is ranked anew)',
      { collation: 'codepoint' },
      true,
      DATASET,
    ],
    [
      'the same dataset cut in other fine blocks (another Cloudflare budget): its dataset file',
      { fineBlockBytes: 4096 },
      true,
      DATASET,
    ],
    ['another dataset: no data file', { pageSizes: [20, 100] }, false, none],
  ])("the old site's reusable data, %s", (_, old, sameDataset, expected) =>
    expect(reusedData(old, sameDataset)).toEqual(expected),
  );
});

describe('--min-free', () => {
  it.each([
    ['0', 0],
    ['500MB', 500e6],
    ['2GB', 2e9],
    ['1.5 gb', 1.5e9],
    ['4096', 4096],
    [1000, 1000],
  ])('%s is %d bytes', (text, bytes) => {
    expect(parseMinFree(text)).toBe(bytes);
  });

  it.each(['-1', '2 GiB', 'lots', ''])('"%s" is refused (exit 2)', (text) => {
    expect(() => parseMinFree(text)).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message: expect.stringMatching(/invalid `minFree` .*expected a size such as 500MB, 2GB or 0/),
      }),
    );
  });

  it('defaults to 5 % of the filesystem, at most 1 GB', () => {
    expect([defaultMinFree(disk(0, { total: 4 * GB })), defaultMinFree(disk(0, { total: 100 * GB }))]).toEqual([
      0.2 * GB,
      GB,
    ]);
  });
});

describe('diskSpace', () => {
  it('asks the nearest existing parent of a directory not created yet', async () => {
    const space = await diskSpace(join(cwd, 'not/yet/there'));
    expect(space.path).toBe(cwd);
    expect(space.free).toBeGreaterThan(0);
  });
});

describe('a build that cannot fit is refused, and one that runs out of room stops, the old site whole', () => {
  const build = (...args: string[]) => cli(cwd, 'build', '--orderings', 'default', '--page-sizes', '20', ...args);

  it('refuses (exit 2) before writing, naming the path, the estimate and the free space; the next build with room works', async () => {
    expect((await build('--out', 'site')).code).toBe(0);
    const before = await readTree(join(cwd, 'site'));
    const run = await build('--out', 'site', '--page-sizes', '20,50', '--min-free', '1000TB');
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(
      new RegExp(
        `^cities-api: not enough free space to build ${join(cwd, 'site')}: the site needs about [\\d.]+ KB beyond what it can reuse of the old site \\(\\d+ files; the estimate \\+ 10 %\\) and a build leaves 1000 TB free \\(--min-free\\), but the filesystem of ${join(cwd, 'site')} has [\\d.]+ [KMGT]?B free\\.`,
      ),
    );
    expect(treeDifferences(before, await readTree(join(cwd, 'site')))).toEqual([]);
    expect(await siteLeftovers(join(cwd, 'site'))).toEqual([]);
    expect((await build('--out', 'site', '--page-sizes', '20,50', '--min-free', '0')).code).toBe(0);
  });

  it('reads minFree from cities-api.config.json', async () => {
    await writeFile(join(cwd, 'cities-api.config.json'), JSON.stringify({ minFree: '1000TB' }));
    try {
      const run = await build('--out', 'configured');
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/a build leaves 1000 TB free \(--min-free\)/);
    } finally {
      await writeFile(join(cwd, 'cities-api.config.json'), '{}');
    }
  });

  it('a build whose disk falls below the margin while writing stops with a clear message, leaves the old site byte-identical, and the next build works', async () => {
    const out = join(cwd, 'guarded');
    const manifest = {
      generator: 'cities-api',
      version: 'test',
      settings: {
        baseUrl: 'http://x',
        collation: 'codepoint',
        pageSizes: [10],
        orderings: ['default'],
        defaultPageSize: 10,
        compression: 'fast',
        liveUrl: null,
      },
      dataset: { count: 0, sha256: '' },
    } as const;
    const entries = (text: string) =>
      Array.from({ length: 30 }, (_, i) => ({
        path: `cities/p/${i}.json`,
        body: Buffer.from(`${text}-${i}`),
        compress: true,
      }));
    await writeSite(out, entries('v1'), manifest, {});
    const before = await readTree(out);
    const guard = new SpaceGuard(out, Number.MAX_SAFE_INTEGER, 1);
    await expect(writeSite(out, entries('v2'), manifest, { guard })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(
        new RegExp(
          `^stopped building ${out}: the filesystem of ${out} has [\\d.]+ [KMGT]?B free, below the [\\d.]+ TB a build leaves free \\(\`minFree\`\\); the site was left as it was`,
        ),
      ),
    });
    expect(treeDifferences(before, await readTree(out))).toEqual([]);
    expect(await siteLeftovers(out)).toEqual([]);
    await expect(writeSite(out, entries('v2'), manifest, {})).resolves.toMatchObject({ written: 91 });
    expect(await readFile(join(out, 'cities/p/3.json'), 'utf8')).toBe('v2-3');
  });
});
