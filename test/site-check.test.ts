import { execFileSync } from 'node:child_process';
import { cp, link, mkdir, readFile, rename, rm, symlink, truncate, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest, readSiteFiles } from '../src/store/manifest-file.js';
import { checkSiteFiles, HELPER_MIN_FILES, startSiteCheck } from '../src/store/site-check.js';
import { writeSite, type SiteEntry } from '../src/store/site-writer.js';
import { StatCache } from '../src/store/stat-cache.js';
import { checkShares } from '../src/store/stat-check.js';
import { tempDir } from './helpers.js';

// The no-change check (lstat against the stat cache) runs on two threads taking chunks of 256
// paths: a site of 900 paths (3 of them per page: the page, its .gz, its .br) spans 4 chunks.

const head = {
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
const PAGES = 900;
const page = (i: number) => `cities/d${i % 3}/${String(i).padStart(4, '0')}.json`;
const entries: SiteEntry[] = [
  ...Array.from({ length: PAGES }, (_, i) => ({ path: page(i), body: `page ${i}`, compress: true })),
  { path: 'openapi.json', body: '{}' },
];

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-site-check-')));
afterAll(() => cleanup());

let sites = 0;
async function builtSite(): Promise<string> {
  const site = join(root, `site-${sites++}`);
  await writeSite(site, entries, head, {});
  return site;
}

/** A file's content changed in place: same inode, same size, another mtime (as `echo x > file` a second later). */
async function editInPlace(file: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  await writeFile(
    file,
    text.replace(/.$/, (c) => (c === 'x' ? 'y' : 'x')),
  );
  const later = new Date(Date.now() + 5000);
  await utimes(file, later, later);
}

/** A file's content changed in place, same size, its times put back to the nanosecond (touch -r): only its ctime tells. */
async function editKeepingTimes(file: string): Promise<void> {
  execFileSync('touch', ['-r', file, `${file}.times`]);
  const bytes = await readFile(file);
  bytes[0] = bytes[0]! ^ 1;
  await writeFile(file, bytes);
  execFileSync('touch', ['-r', `${file}.times`, file]);
  await unlink(`${file}.times`);
}

const linkToCopy = async (path: string) => {
  await cp(path, `${path}.copy`, { recursive: true, preserveTimestamps: true });
  await rm(path, { recursive: true });
  await symlink(`${path}.copy`, path);
};

describe('checkSiteFiles: every file not as built is named, in the manifest order, whichever thread checked it', () => {
  const middle = page(451);
  const last = page(899);
  it.each<[string, string[], (site: string) => Promise<unknown>]>([
    ['nothing changed', [], async () => undefined],
    ['a page edited in place, same size', [page(0)], (site) => editInPlace(join(site, page(0)))],
    ['a page edited, same size, its mtime put back', [page(2)], (site) => editKeepingTimes(join(site, page(2)))],
    [
      'the same through a hard link from outside the site',
      [`${middle}.br`],
      async (site) => {
        await link(join(site, `${middle}.br`), join(root, `outside-${sites}`));
        await editKeepingTimes(join(root, `outside-${sites}`));
      },
    ],
    ['a page truncated', [middle], (site) => truncate(join(site, middle), 2)],
    [
      'a page replaced by another file (renamed over it)',
      [last],
      async (site) => {
        await writeFile(join(site, `${last}.new`), 'page 899');
        await rename(join(site, `${last}.new`), join(site, last));
      },
    ],
    ['a page deleted', [middle], (site) => unlink(join(site, middle))],
    ['a page turned into a link to a copy of itself', [middle], (site) => linkToCopy(join(site, middle))],
    [
      'a page turned into a directory',
      [last],
      async (site) => {
        await unlink(join(site, last));
        await mkdir(join(site, last));
      },
    ],
    ['a .gz edited in place', [`${middle}.gz`], (site) => editInPlace(join(site, `${middle}.gz`))],
    ['a .br deleted', [`${last}.br`], (site) => unlink(join(site, `${last}.br`))],
    ['a file beside the pages emptied', ['openapi.json'], (site) => writeFile(join(site, 'openapi.json'), '')],
    [
      'a directory of pages turned into a link to a copy of itself: all its files',
      Array.from({ length: PAGES / 3 }, (_, n) => page(3 * n + 1))
        .sort()
        .flatMap((p) => [p, `${p}.gz`, `${p}.br`]),
      (site) => linkToCopy(join(site, 'cities/d1')),
    ],
    [
      'a page in every chunk edited, every third one with its .br deleted too',
      Array.from({ length: PAGES / 50 }, (_, n) => page(50 * n))
        .sort()
        .flatMap((p) => (Number(p.slice(-9, -5)) % 150 === 0 ? [p, `${p}.br`] : [p])),
      async (site) => {
        for (let i = 0; i < PAGES; i += 50) {
          await editInPlace(join(site, page(i)));
          if (i % 150 === 0) await unlink(join(site, `${page(i)}.br`));
        }
      },
    ],
  ])('%s', async (_, changed, damage) => {
    const site = await builtSite();
    await damage(site);
    expect(await checkSiteFiles(site)).toEqual({ changed, unverified: false });
    // A site this small is checked by this thread alone when the build says how many files it has.
    expect(await startSiteCheck(site, HELPER_MIN_FILES - 1).result()).toEqual({ changed, unverified: false });
  });

  it('the expected names are in the manifest order (the table above assumes it)', async () => {
    const paths = Object.keys((await readManifest(await builtSite()))!.files);
    expect(paths).toEqual([...paths].sort());
  });

  it('a check whose helper thread was stopped still answers, alone on this thread', async () => {
    const site = await builtSite();
    await truncate(join(site, page(7)), 1);
    const check = startSiteCheck(site);
    check.cancel();
    expect(await check.result()).toEqual({ changed: [page(7)], unverified: false });
  });

  it('a site without its stat cache is unverified: nothing could be checked', async () => {
    const site = await builtSite();
    await unlink(join(root, `.${site.split('/').at(-1)}.stat-cache`));
    expect(await checkSiteFiles(site)).toEqual({ changed: [], unverified: true });
  });

  it('a damaged manifest is said as before (the helper thread leaves it to this one)', async () => {
    const site = await builtSite();
    const manifest = join(site, '_cities-api/manifest.json');
    const text = await readFile(manifest, 'utf8');
    await writeFile(manifest, text.slice(0, -10));
    await expect(checkSiteFiles(site)).rejects.toThrow(/manifest\.json is damaged/);
  });
});

describe('checkShares: threads sharing one counter split the chunks', () => {
  it('two checkers on one counter each take chunks, and together name every changed file once', async () => {
    const site = await builtSite();
    for (let i = 0; i < PAGES; i += 100) await truncate(join(site, page(i)), 1);
    const manifest = (await readSiteFiles(site))!;
    const paths = manifest.files;
    const cache = (await StatCache.read(site, manifest))!;
    const next = new Int32Array(new SharedArrayBuffer(4));
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    const [one, two] = await Promise.all([
      checkShares(site, paths, cache, next, turn),
      checkShares(site, paths, cache, next, turn),
    ]);
    expect([one.length > 0, two.length > 0]).toEqual([true, true]);
    const names = [...one, ...two].sort((a, b) => a[0] - b[0]).flatMap(([, found]) => found);
    expect(names).toEqual(Array.from({ length: PAGES / 100 }, (_, n) => page(100 * n)).sort());
  });
});
