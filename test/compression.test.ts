import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type BuildOptions } from '../src/app/build.js';
import { serve } from '../src/app/serve.js';
import type { Compression, CompressionLevel } from '../src/site/spec.js';
import { compressPage } from '../src/store/compression.js';
import { writeSite } from '../src/store/site-writer.js';
import { cli } from './cli-helpers.js';
import { KIT, readTree, tempDir } from './helpers.js';
import { rawRequest } from './serve-helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-compression-')));
afterAll(() => cleanup());

let sites = 0;
const newDir = () => join(root, `site-${++sites}`);
const DATA = join(KIT, 'cities48.csv');
const small = (out: string, compression?: Compression, more: Partial<BuildOptions> = {}) =>
  build({
    data: DATA,
    out,
    baseUrl: 'https://example.org',
    collation: 'codepoint',
    orderings: ['default', 'name_en'],
    pageSizes: [10, 100],
    compression,
    ...more,
  });

/** The gzip header's XFL byte: 2 for the slowest level (9), 0 for the levels between. */
const gzipXfl = (gz: Buffer) => gz[8];
const unpack = { '.gz': gunzipSync, '.br': brotliDecompressSync } as const;

/** JSON text like a page's, `bytes` long, varied enough that the levels differ (deterministic). */
function pageLike(bytes: number, seed: number): Buffer {
  const rows: string[] = [];
  let x = seed;
  for (let length = 0; length < bytes; ) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const row = JSON.stringify({
      id: x % 100_000,
      name_en: `City ${x.toString(36)}`,
      name_ar: `مدينة ${(x >> 7).toString(36)}`,
      latitude: (x % 18_000) / 100 - 90,
      top: x % 7 === 0,
    });
    rows.push(row);
    length += row.length + 1;
  }
  return Buffer.from(rows.join(',')).subarray(0, bytes);
}

describe('each level writes .gz/.br that decompress to the page, made at that level, on every write path', () => {
  const manifest = (compression: Compression) =>
    ({
      generator: 'cities-api',
      version: 'test',
      settings: {
        baseUrl: 'http://x',
        collation: 'codepoint',
        pageSizes: [10],
        orderings: ['default'],
        defaultPageSize: 10,
        compression,
        liveUrl: null,
      },
      dataset: { count: 0, sha256: '' },
    }) as const;
  // Sizes just past what picks each path (a writer thread's slot is 128 KiB; a streamed body gets
  // brotli's 256 KiB window): brotli's best level costs about 2.2 CPU-s per MB of this text, and is
  // still 16-18 % smaller than fast at these sizes (1.5 MB and 300 kB before: 3.4 + 2 × 0.7 CPU-s).
  const PATHS = [
    ['a small page (a writer thread)', pageLike(20_000, 1), 1],
    ["a page larger than a thread's slot (one buffer, zlib's pool)", pageLike(200_000, 2), 1],
    ['a large page (parts, streamed, past the streamed window)', pageLike(600_000, 3), 3],
  ] as const;
  const CASES = (['fast', 'best'] as const).flatMap((level) =>
    PATHS.map(([name, page, parts]) => [level, name, page, parts] as const),
  );

  it.each(CASES)(
    '%s: %s',
    async (level, _, page, parts) => {
      const out = newDir();
      const third = Math.ceil(page.length / parts);
      const body =
        parts === 1 ? page : Array.from({ length: parts }, (_, i) => page.subarray(i * third, (i + 1) * third));
      await writeSite(out, [{ path: 'cities/default/10/1.json', body, compress: true }], manifest(level), {});
      const tree = await readTree(out);
      const [gz, br] = [tree.get('cities/default/10/1.json.gz')!, tree.get('cities/default/10/1.json.br')!];
      expect([unpack['.gz'](gz).equals(page), unpack['.br'](br).equals(page)]).toEqual([true, true]);
      expect(gzipXfl(gz)).toBe(level === 'best' ? 2 : 0);
      // brotli says no level: best's optimal parsing is at least a tenth smaller than fast on such text.
      const [, fastBr] = compressPage(page, 'fast');
      if (level === 'best') expect(br.length).toBeLessThan(fastBr.length * 0.9);
      else expect(br.length).toBeGreaterThanOrEqual(fastBr.length * 0.97);
      if (parts === 1) expect([gz, br]).toEqual(compressPage(page, level));
    },
    60_000,
  );
});

describe('the level is a setting of the site: a rebuild at another level rewrites every .gz/.br and only them', () => {
  const compressedOf = async (dir: string) =>
    [...(await readTree(dir)).keys()].filter((p) => /\.(gz|br)$/.test(p)).sort();
  const inodes = async (dir: string, paths: string[]) =>
    Promise.all(paths.map(async (p) => (await stat(join(dir, p))).ino));

  it.each<[string, Compression, Compression, 'none' | 'siblings']>([
    ['fast, then fast: nothing written', 'fast', 'fast', 'none'],
    ['best, then best: nothing written', 'best', 'best', 'none'],
    ['fast, then best: every .gz/.br and the manifest', 'fast', 'best', 'siblings'],
    ['best, then fast: every .gz/.br and the manifest', 'best', 'fast', 'siblings'],
    ['none, then best: every .gz/.br (new) and the manifest', 'none', 'best', 'siblings'],
    ['best, then none: the manifest; the .gz/.br removed', 'best', 'none', 'none'],
  ])(
    '%s',
    async (_, first, then, rewritten) => {
      const out = newDir();
      await small(out, first);
      const pages = [...(await readTree(out)).keys()]
        .filter((p) => /^cities\/[^/]+\/([^/]+\/[^/]+|all-\d+)\.json$/.test(p))
        .sort();
      const pageInodes = await inodes(out, pages);
      const before = await compressedOf(out);
      const beforeInodes = await inodes(out, before);
      const again = await small(out, then);
      const after = await compressedOf(out);
      expect(await inodes(out, pages)).toEqual(pageInodes);
      expect(after).toEqual(then === 'none' ? [] : pages.flatMap((p) => [`${p}.br`, `${p}.gz`]).sort());
      const siblings = rewritten === 'siblings' ? after.length : 0;
      const manifest = first === then ? 0 : 1;
      expect([again.written, again.removed]).toEqual([siblings + manifest, then === 'none' ? before.length : 0]);
      if (first === then) expect(await inodes(out, after)).toEqual(beforeInodes);
      const manifestText = await readFile(join(out, '_cities-api/manifest.json'), 'utf8');
      expect(JSON.parse(manifestText).settings.compression).toBe(then);
    },
    120_000,
  );

  it.each<[string, CompressionLevel, number]>([
    ["rebuilt at fast: the old .gz/.br are fast's, kept (only the manifest is written)", 'fast', 0],
    ['rebuilt at best: every .gz/.br rewritten', 'best', 1],
  ])(
    'a site built before levels (its manifest says "compress": true) %s',
    async (_, level, rewrites) => {
      const out = newDir();
      await small(out, 'fast');
      const path = join(out, '_cities-api/manifest.json');
      const text = await readFile(path, 'utf8');
      await writeFile(`${path}.old`, text.replace('"compression": "fast"', '"compress": true'));
      await rename(`${path}.old`, path);
      const siblings = (await compressedOf(out)).length;
      expect((await small(out, level)).written).toBe(1 + rewrites * siblings);
    },
    120_000,
  );

  it.each(['fast', 'best'] as const)(
    '%s: the same input gives byte-identical .gz/.br',
    async (level) => {
      const [a, b] = [newDir(), newDir()];
      await small(a, level);
      await small(b, level, { force: true });
      const [treeA, treeB] = [await readTree(a), await readTree(b)];
      const compressed = [...treeA.keys()].filter((p) => /\.(gz|br)$/.test(p));
      expect(compressed.length).toBeGreaterThan(0);
      expect(compressed.filter((p) => !treeA.get(p)!.equals(treeB.get(p) ?? Buffer.alloc(0)))).toEqual([]);
    },
    120_000,
  );
});

describe('serve answers from the .gz/.br of a site built at best', () => {
  // One site and one server for the rows: each row only reads.
  let out: string;
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    out = newDir();
    await small(out, 'best');
    server = await serve({ dir: out, port: 0 });
  }, 60_000);
  afterAll(() => server?.close());

  it.each([
    ['br', '.br', 'br'],
    ['gzip', '.gz', 'gzip'],
    ['gzip, deflate, br', '.br', 'br'],
  ] as const)(
    'Accept-Encoding: %s → the %s file, Content-Encoding %s, Vary: Accept',
    async (accept, variant, encoding) => {
      const res = await rawRequest(`${server.url}/cities/?ordering=name_en&page_size=10&page=2`, {
        headers: { 'Accept-Encoding': accept },
      });
      expect([res.status, res.headers['content-encoding'], res.headers.vary]).toEqual([200, encoding, 'Accept']);
      expect(res.body.equals(await readFile(join(out, `cities/name_en/10/2.json${variant}`)))).toBe(true);
    },
    60_000,
  );
});

describe('--compression on the command line and in the config file', () => {
  it.each([
    [
      '--no-compress with --compression best',
      ['--no-compress', '--compression', 'best'],
      /--no-compress \(compress: false\) asks for no \.gz\/\.br, --compression best for them/,
    ],
    ['an unknown level', ['--compression', 'max'], /argument 'max' is invalid[^]*fast, best/],
  ])('refuses %s (exit 2), writing nothing', async (_, args, message) => {
    const out = newDir();
    const run = await cli(root, 'build', '--data', DATA, '--out', out, '--orderings', 'default', ...args);
    expect(run).toMatchObject({ code: 2, stderr: expect.stringMatching(message) });
    await expect(stat(out)).rejects.toThrow();
  });

  it.each([
    ['"compression": "max"', { compression: 'max' }, /invalid compression "max": use none, fast, best/],
    [
      '"compress": false with "compression": "fast"',
      { compress: false, compression: 'fast' },
      /--compression fast for them/,
    ],
  ])('refuses a config file with %s (exit 2)', async (_, config, message) => {
    const dir = newDir();
    await writeFile(`${dir}.json`, JSON.stringify({ data: DATA, out: dir, orderings: 'default', ...config }));
    expect(await cli(root, 'build', '--config', `${dir}.json`)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(message),
    });
  });

  it.each([
    ['--no-compress (the older spelling)', 'none', ['--no-compress']],
    ['--no-compress --compression none', 'none', ['--no-compress', '--compression', 'none']],
    ['no flag', 'fast', []],
    ['--compression best', 'best', ['--compression', 'best']],
  ])(
    '%s → %s',
    async (_, expected, args) => {
      const out = newDir();
      expect(
        (
          await cli(
            root,
            'build',
            '--data',
            DATA,
            '--out',
            out,
            '--orderings',
            'default',
            '--page-sizes',
            '50',
            ...args,
          )
        ).code,
      ).toBe(0);
      expect(JSON.parse(await readFile(join(out, '_cities-api/manifest.json'), 'utf8')).settings.compression).toBe(
        expected,
      );
    },
    60_000,
  );
});
