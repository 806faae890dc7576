import { lstat, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SiteOwnership } from '../src/store/foreign-files.js';
import { FileList } from '../src/fs/file-list.js';
import { readSiteFiles, type SiteFiles } from '../src/store/manifest-file.js';
import { writeSite } from '../src/store/site-writer.js';
import { StatCache } from '../src/store/stat-cache.js';
import { tempDir } from './helpers.js';

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
const entries = [
  { path: 'cities/default/10/1.json', body: 'one', compress: true },
  { path: 'cities/default/10/2.json', body: 'two', compress: true },
  { path: 'openapi.json', body: '{}' },
];

let root: string;
let cleanup: () => Promise<void>;
let site: string;
let manifest: SiteFiles;
let good: Buffer;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-stat-cache-'));
  site = join(root, 'site');
  await writeSite(site, entries, head, {});
  manifest = (await readSiteFiles(site))!;
  good = await readFile(join(root, '.site.stat-cache'));
});
afterAll(() => cleanup());

describe('StatCache.read: only a whole cache written for this very manifest is used', () => {
  it('the cache a build wrote matches every file it wrote, the .gz/.br of pages included', async () => {
    const cache = (await StatCache.read(site, manifest))!;
    expect(Array.from({ length: manifest.files.size }, (_, i) => cache.slotsAt(i))).toEqual([
      [0, 1, 2],
      [0, 1, 2],
      [0],
    ]);
  });

  it('a cache written in several pieces (10,000 files) records every file at its place in the manifest', async () => {
    const big = join(root, 'big');
    const many = Array.from({ length: 10_000 }, (_, i) => ({
      path: `p/${i}.json`,
      body: String(i),
      compress: i % 3 === 0,
    }));
    await writeSite(big, many, head, {});
    const listed = (await readSiteFiles(big))!;
    const cache = (await StatCache.read(big, listed))!;
    const paths = Array.from({ length: listed.files.size }, (_, i) => listed.files.path(i));
    expect(paths.map((_, i) => cache.slotsAt(i))).toEqual(
      paths.map((p) => (Number(p.slice(2, -5)) % 3 === 0 ? [0, 1, 2] : [0])),
    );
    const last = paths.length - 1;
    expect(cache.matchesAt(last, 0, await lstat(join(big, paths[last]!)))).toBe(true);
  });

  it.each<[string, (file: string) => Promise<unknown>]>([
    ['missing', (file) => rm(file)],
    ['empty', (file) => truncate(file, 0)],
    ['truncated', (file) => writeFile(file, good.subarray(0, good.length - 8))],
    ['not a multiple of 8 bytes', (file) => writeFile(file, Buffer.concat([good, Buffer.from('x')]))],
    ['another format (first number)', (file) => writeFile(file, Buffer.concat([Buffer.alloc(8), good.subarray(8)]))],
    [
      'for a manifest of another length',
      (file) =>
        writeFile(
          file,
          Buffer.concat([good.subarray(0, 16), Buffer.from(new Float64Array([99]).buffer), good.subarray(24)]),
        ),
    ],
  ])('a cache %s is none', async (_, spoil) => {
    const file = join(root, '.site.stat-cache');
    await spoil(file);
    try {
      expect(await StatCache.read(site, manifest)).toBeNull();
    } finally {
      await writeFile(file, good);
    }
  });

  it('a cache of another manifest (its inode, size or mtime) is none', async () => {
    await writeFile(join(site, '_cities-api/manifest.json'), await readFile(join(site, '_cities-api/manifest.json')));
    expect(await StatCache.read(site, manifest)).toBeNull();
  });
});

/** A list of files (their hashes do not matter here). */
const listOf = (...paths: string[]) => paths.reduce((list, path) => (list.add(path, '', false), list), new FileList());

describe('SiteOwnership: what of a directory the site built there may replace or remove', () => {
  const owner = new SiteOwnership({ ...head, files: listOf('cities/default/10/1.json', 'openapi.json') });
  it.each([
    ['a listed file', 'cities/default/10/1.json', true, false],
    ['the manifest', '_cities-api/manifest.json', true, false],
    ['the .gz of a listed file (a compressed site)', 'cities/default/10/1.json.gz', true, false],
    ['the .br of a listed file', 'openapi.json.br', true, false],
    ['a directory holding listed files', 'cities/default', false, true],
    ['the directory of the manifest', '_cities-api', false, true],
    ['a file beside the pages', 'cities/default/10/notes.txt', false, false],
    ['a .gz of a file not listed', 'notes.txt.gz', false, false],
    ['a directory of no listed file', 'media', false, false],
    ['a prefix that is not a directory', 'cities/def', false, false],
  ])('%s (%s): file %s, directory %s', (_, path, file, dir) => {
    expect([owner.ownsFile(path), owner.ownsDir(path)]).toEqual([file, dir]);
  });

  it('an uncompressed site owns no .gz/.br, and no site owns nothing', () => {
    const plain = new SiteOwnership({
      ...head,
      settings: { ...head.settings, compression: 'none' },
      files: listOf('openapi.json'),
    });
    expect([plain.ownsFile('openapi.json.gz'), new SiteOwnership(null).ownsFile('openapi.json')]).toEqual([
      false,
      false,
    ]);
  });
});
