import { execFile } from 'node:child_process';
import { copyFile, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { build, type BuildOptions, type BuildResult } from '../src/app/build.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { StatCache } from '../src/store/stat-cache.js';
import { makeCity, readTree, tempDir } from './helpers.js';

// A rebuild from the very dataset file a site was built from (its digest recorded in the stat
// cache) validates nothing again: the file is hashed, the site's files checked by stat. Any other
// file (other bytes, even with the same size and mtime; other cities) is read and validated.

vi.mock('../src/dataset/read-dataset.js', { spy: true });

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-rebuild-dataset-')));
afterAll(() => cleanup());
beforeEach(() => {
  vi.mocked(readDataset).mockClear();
});

const cities = (names: string[]) =>
  `[\n${names.map((name, i) => `  ${JSON.stringify(makeCity(i + 1, { name }))}`).join(',\n')}\n]\n`;

let sites = 0;
/** A site built from a fresh dataset file (its path and the site's options returned). */
async function built(text = cities(['Alpha', 'Beta', 'Gamma'])): Promise<BuildOptions & { data: string; out: string }> {
  const n = sites++;
  const options = {
    data: join(root, `cities-${n}.json`),
    out: join(root, `site-${n}`),
    collation: 'codepoint',
    orderings: ['default', 'name_en'],
    pageSizes: [10],
  } as const;
  await writeFile(options.data, text);
  await build(options);
  return options;
}

const cacheOf = (site: string) => join(root, `.${site.split('/').at(-1)}.stat-cache`);
/** The last byte of the recorded digest flipped (the cache still bound to the manifest). */
async function spoilDigest(site: string): Promise<void> {
  const bytes = await readFile(cacheOf(site));
  bytes[bytes.length - 1]! ^= 0xff;
  await writeFile(cacheOf(site), bytes);
}
const counts = (r: BuildResult) => [r.written, r.unchanged, r.removed];
const planOf = ({ cities: n, pages, files, jsonBytes, compressedBytes, upToDate }: BuildResult) => ({
  cities: n,
  pages,
  files,
  jsonBytes,
  compressedBytes,
  upToDate,
});

describe('a rebuild from the dataset file the site was built from', () => {
  it('validates nothing, writes nothing, and plans as a rebuild that read the file does', async () => {
    const options = await built();
    vi.mocked(readDataset).mockClear();
    const fast = await build(options);
    expect(vi.mocked(readDataset)).not.toHaveBeenCalled();
    expect(fast.written).toBe(0);
    await spoilDigest(options.out);
    const read = await build(options);
    expect(vi.mocked(readDataset)).toHaveBeenCalledTimes(1);
    expect(planOf(fast)).toEqual(planOf(read));
  });

  it('with a page edited since, rewrites that page (the dataset read then)', async () => {
    const options = await built();
    await writeFile(join(options.out, 'cities/default/10/1.json'), '{}');
    const again = await build(options);
    expect(again.check?.changed).toEqual(['cities/default/10/1.json']);
    expect(counts(again)).toEqual([1, again.files - 1, 0]);
    expect(counts(await build(options))).toEqual([0, again.files, 0]);
  });

  it('refuses a site of more files than --max-files allows, as a read dataset would', async () => {
    const options = await built();
    await expect(build({ ...options, maxFiles: 10 })).rejects.toThrow(/files/);
  });
});

describe('any other dataset file is read and validated', () => {
  const sameSizeOtherBytes = (text: string) => text.replace('Beta', 'Bxta');
  it.each<[string, (text: string) => string, boolean]>([
    ['other cities, same size, the mtime put back (touch -r)', sameSizeOtherBytes, false],
    ['the same cities written otherwise (a space added)', (text) => text.replace(/\n$/, ' \n'), true],
  ])('%s', async (_, change, sameCities) => {
    const options = await built();
    const before = await readTree(options.out);
    const reference = join(root, `reference-${sites}`);
    await copyFile(options.data, reference);
    await writeFile(options.data, change(await readFile(options.data, 'utf8')));
    await promisify(execFile)('touch', ['-r', reference, options.data]);
    vi.mocked(readDataset).mockClear();
    const again = await build(options);
    expect(vi.mocked(readDataset)).toHaveBeenCalledTimes(1);
    expect(again.written === 0).toBe(sameCities);
    if (!sameCities) expect(await readFile(join(options.out, 'cities/name_en/10/1.json'), 'utf8')).toContain('Bxta');
    else expect(await readTree(options.out)).toEqual(before);
  });

  it('a record spoiled (its digest changed) is not trusted: the file is read, nothing written', async () => {
    const options = await built();
    await spoilDigest(options.out);
    expect(await StatCache.readDataset(options.out)).not.toBeNull();
    vi.mocked(readDataset).mockClear();
    expect((await build(options)).written).toBe(0);
    expect(vi.mocked(readDataset)).toHaveBeenCalledTimes(1);
  });
});

describe('StatCache.readDataset: only the record of a cache written for the current manifest', () => {
  it.each<[string, (cache: string, site: string) => Promise<unknown>]>([
    ['the cache truncated', (cache) => truncate(cache, 48)],
    [
      'the manifest rewritten (another inode and mtime)',
      async (_, site) =>
        writeFile(join(site, '_cities-api/manifest.json'), await readFile(join(site, '_cities-api/manifest.json'))),
    ],
    [
      'a cache of format 1 (no record)',
      async (cache) => {
        const bytes = await readFile(cache);
        bytes.writeDoubleLE(1, 8);
        await writeFile(cache, bytes.subarray(0, bytes.length - 40));
      },
    ],
  ])('%s: none', async (_, spoil) => {
    const options = await built();
    expect(await StatCache.readDataset(options.out)).toMatchObject({ cityBytes: expect.any(Number) });
    await spoil(cacheOf(options.out), options.out);
    expect(await StatCache.readDataset(options.out)).toBeNull();
  });
});
