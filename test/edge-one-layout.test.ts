import { describe, expect, it } from 'vitest';
import type { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { CityIndex as Index } from '../src/core/city-index.js';
import type { Collation } from '../src/core/collation.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { ROUTES } from '../src/core/route-table.js';
import { heldFiles, type PositionalFile } from '../src/platforms/lambda/package-reads.js';
import { ByteArena } from '../src/site/byte-pool.js';
import { LAYOUTS, rankPath } from '../src/site/edge-files.js';
import { RangeIgnored } from '../src/site/edge-ranges.js';
import { blocksOf, parseIndex } from '../src/site/edge-index.js';
import { EdgeSource, type EdgeSourceOptions } from '../src/site/edge-source.js';
import { BASE, differences, kitIndex, kitQueries, queryTable, streamed, tiedIndex } from './edge-answers.js';
import { countedEdgeSite, sharedEdgeSite } from './edge-helpers.js';
import { makeCity } from './helpers.js';

// AWS Lambda's package holds one layout of the cities, the default ordering's, with the index and
// the rank files (src/platforms/lambda/package-files.ts): a page of any other ordering is gathered
// from it by position (site/edge-gather.ts), in windows, by ranges where the platform reads them
// (the package's files held open: package-reads.ts). Here over the package's files only: a read of
// any other layout's block fails, as it would on Lambda.

/** The edge files a Lambda package holds: the index, every rank file, the default ordering's layout. */
function packageOf(files: Map<string, Uint8Array>): Map<string, Uint8Array> {
  const index = parseIndex(files.get(ROUTES.edge.index)!);
  const { starts, path } = blocksOf(index, ROUTES.absent);
  const kept = new Set([ROUTES.edge.index, ...LAYOUTS.map(rankPath), ...starts.map((_, b) => path(b))]);
  return new Map([...files].filter(([name]) => kept.has(name)));
}

/** A dataset's package, read through a counter, and a source over it with `options` (edge files made once per index: the cases only read them). */
function packaged(index: CityIndex, options: EdgeSourceOptions & { ranges?: boolean } = {}) {
  const all = sharedEdgeSite(index).files;
  const site = countedEdgeSite(packageOf(all));
  const { ranges = true, ...rest } = options;
  const source = new EdgeSource(site.read, { oneLayout: true, ...rest, ...(ranges && { readRange: site.readRange }) });
  return { site, source, layouts: all.size - site.files.size };
}

describe('one layout deployed: every answer is answerListing, byte for byte', () => {
  it.each<[string, Collation, EdgeSourceOptions & { ranges?: boolean }]>([
    ['cities1234', 'codepoint', {}],
    ['cities1234', 'locale', {}],
    ['cities1234', 'codepoint', { ranges: false }],
    ['cities1234', 'codepoint', { concurrency: 1, cacheBytes: 0, headBytes: 0 }],
    ['cities48', 'locale', {}],
    ['cities11', 'codepoint', { ranges: false, cacheBytes: 0 }],
    ['prefixed30', 'codepoint', {}],
    ['empty', 'codepoint', {}],
  ])(
    '%s in %s collation, options %j: the kit queries, every ordering × page size × page',
    async (name, collation, options) => {
      const index = await kitIndex(name, collation);
      const { source } = packaged(index, options);
      const base = name === 'prefixed30' ? 'https://cities.example.org/api/v1' : BASE;
      const queries = [...new Set([...kitQueries(name), ...queryTable(index.count)])];
      expect(await differences(index, source, queries, base)).toEqual([]);
    },
  );

  it('a platform that ignores Range (sends whole files): the file sent is used, whole blocks are read from then on', async () => {
    const index = await kitIndex('cities1234');
    const site = countedEdgeSite(packageOf(sharedEdgeSite(index).files));
    let ranges = 0;
    const readRange = async (path: string) => {
      ranges++;
      throw new RangeIgnored(await site.read(path));
    };
    const source = new EdgeSource(site.read, { oneLayout: true, readRange, cacheBytes: 0, concurrency: 1 });
    const queries = ['ordering=-name_en,name_ar&page_size=100&page=7', 'ordering=name_fr&page_size=1234'];
    expect(await differences(index, source, queries)).toEqual([]);
    expect(ranges).toBe(1);
  });

  it("the package holds one layout where the build wrote several (cities1234's fields differ in order)", async () => {
    const { layouts } = packaged(await kitIndex('cities1234'));
    expect(layouts).toBeGreaterThan(0);
  });
});

describe('what a page reads from one layout', () => {
  // After the one-time reads (the index, the rank files of the page's fields and the default
  // ordering's): at most 3 x the answer + 512 KB (issue #25), block heads included.
  it.each([
    ['the default ordering', 'page_size=10&page=777'],
    ['a field ascending', 'ordering=name_fr&page_size=7&page=1234'],
    ['a field descending, ties by id', 'ordering=-name_en&page_size=10&page=2000'],
    ['multi-field', 'ordering=name_ar,-name_en&page_size=10&page=3001'],
    ['multi-field spread thin, 3 terms', 'ordering=-name_en,name_ar,-name_fr&page_size=300&page=31'],
    ['-top and a field in ties', 'ordering=-top,name_en,-name_ar&page_size=100&page=57'],
    ['a large page', 'ordering=name_ar,-name_fr&page_size=5000&page=3'],
    ['every city on one page, in a field', 'ordering=-name_ar&page_size=100000'],
    ['every city on one page, default ordering', 'page_size=100000'],
  ])('%s (%s): bytes read after the one-time reads vs 3 x the answer + 512 KB', async (_, query) => {
    const index = tiedIndex(40_000);
    const { site, source } = packaged(index, { cacheBytes: 0 });
    await streamed(source, query.replace(/page=\d+/, 'page=1'));
    [site.reads.length, site.counted.bytes] = [0, 0];
    const answer = await streamed(source, query);
    expect(site.reads.filter((p) => p.includes('/ranks/'))).toEqual([]);
    expect(answer.body.equals(bodyBytes(answerListing(index, parseQuery(query), BASE).body))).toBe(true);
    expect(site.counted.bytes).toBeLessThanOrEqual(3 * answer.body.length + 512_000);
  });

  it('a page of every city, 17 MB of them scattered over the layout, reads a window or two between two parts it sends', async () => {
    // Cities of ~2.8 KB (name_en long, the other names short: every name long made them 36 KB, the page 218 MB),
    // name_ar in an order unrelated to the default one: each window is ~700 of them (2 MB).
    const cities = Array.from({ length: 6000 }, (_, i) => {
      const name = `C${String(i).padStart(5, '0')}`;
      return makeCity(i + 1, { name, name_en: `${name} ${'x'.repeat(2400)}`, name_ar: `A${(i * 4327) % 6000}` });
    });
    const index = new Index(CityTable.fromCities(cities), 'codepoint');
    const { site, source } = packaged(index, { cacheBytes: 0 });
    const query = 'ordering=name_ar&page_size=6000';
    const { body } = await source.stream(parseQuery(query), BASE);
    let [before, most, sent] = [site.counted.bytes, 0, 0];
    for await (const part of body) {
      most = Math.max(most, site.counted.bytes - before);
      [before, sent] = [site.counted.bytes, sent + part.length];
    }
    expect(sent).toBe(bodyBytes(answerListing(index, parseQuery(query), BASE).body).length);
    // Two windows (one sent, one read ahead) of at most 2 MB of cities, each read within 3 x + the page's slack.
    expect(most).toBeLessThanOrEqual(2 * (3 * 2_000_000) + 256_000);
    expect(most).toBeGreaterThan(0);
    expect(site.counted.bytes).toBeLessThanOrEqual(3 * sent + 512_000);
  });
});

describe("the package's files of two builds, or cut short, are never answered from", () => {
  const index = () => tiedIndex(3000);
  const blockOf = (files: Map<string, Uint8Array>) => {
    const { path } = blocksOf(parseIndex(files.get(ROUTES.edge.index)!), ROUTES.absent);
    return path(1);
  };

  it.each<[string, (bytes: Uint8Array, other: Uint8Array) => Uint8Array, RegExp]>([
    ['a block of another build', (_, other) => other, /is from another build than the edge index/],
    ['a block cut short', (bytes) => bytes.subarray(0, bytes.length - 700), /changed while it was read|cannot be read/],
    ['a block whose head is cut', (bytes) => bytes.subarray(0, 40), /cannot be read|holds|changed/],
  ])('%s: a clear error, and the next request once it is whole again is answered', async (_, spoil, message) => {
    const files = packageOf(sharedEdgeSite(index()).files);
    const other = packageOf(sharedEdgeSite(index(), '99999999999999ff').files);
    const path = blockOf(files);
    const good = files.get(path)!;
    files.set(path, spoil(good, other.get(path)!));
    const site = countedEdgeSite(files);
    const source = new EdgeSource(site.read, { oneLayout: true, readRange: site.readRange, cacheBytes: 0 });
    const query = 'ordering=-name_ar&page_size=3000';
    await expect(streamed(source, query)).rejects.toThrow(message);
    files.set(path, good);
    expect(await differences(index(), source, [query, 'ordering=name_en,-name_ar&page_size=7&page=100'])).toEqual([]);
  });
});

describe('ByteArena: views of a few arrays, reused all at once', () => {
  it.each([
    ['views of one array, none overlapping', [100, 200, 300], 1024, 1],
    ['a view larger than the grain: an array of its own', [100, 5000, 10], 1024, 3],
    ['views that do not fit the rest of an array: the next one', [700, 700, 700], 1024, 3],
  ])('%s', (_, sizes, grain, arrays) => {
    const arena = new ByteArena(grain);
    const views = sizes.map((size) => arena.take(size));
    expect(views.map((v) => v.length)).toEqual(sizes);
    views.forEach((v, i) => v.fill(i + 1));
    views.forEach((v, i) => expect(v.every((b) => b === i + 1)).toBe(true));
    expect(new Set(views.map((v) => v.buffer)).size).toBe(arrays);
    const held = arena.bytes;
    arena.reset();
    sizes.forEach((size) => arena.take(size));
    expect(arena.bytes).toBe(held);
  });
});

describe("heldFiles: the package's files opened once, read by position", () => {
  /** Files of `size` bytes (byte i = i % 251), their opens and closes counted, each read waiting for `gate`. */
  function files(size = 1000) {
    const log = { opened: [] as string[], closed: [] as string[] };
    let gate = Promise.resolve();
    const open = async (path: string): Promise<PositionalFile> => {
      if (path.startsWith('missing')) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      log.opened.push(path);
      let closed = false;
      return {
        async read(buffer, offset, length, position) {
          await gate;
          if (closed) throw new Error(`${path} read after its close`);
          const n = Math.max(0, Math.min(length, size - position));
          for (let i = 0; i < n; i++) buffer[offset + i] = (position + i) % 251;
          return { bytesRead: n };
        },
        stat: async () => ({ size }),
        close: async () => {
          closed = true;
          log.closed.push(path);
        },
      };
    };
    return { log, open, hold: (promise: Promise<void>) => (gate = promise) };
  }

  it('each file is opened once for any number of reads, ranges and whole', async () => {
    const { log, open } = files();
    const { read, readRange } = heldFiles(open);
    for (let i = 0; i < 5; i++)
      expect([...(await readRange('a', 10 * i, 10 * i + 3))]).toEqual([0, 1, 2].map((k) => 10 * i + k));
    expect((await read('a')).length).toBe(1000);
    expect((await readRange('a', 995, 1010)).length).toBe(5);
    expect(log).toEqual({ opened: ['a'], closed: [] });
  });

  it('a range read into the array `into` gives', async () => {
    const { open } = files();
    const arena = new ByteArena(64);
    const bytes = await heldFiles(open).readRange('a', 251, 261, arena.take);
    expect([...bytes]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(bytes.buffer.byteLength).toBe(64);
  });

  it('beyond the most held, the least recently used is closed, only once its reads are done', async () => {
    const { log, open, hold } = files();
    const { readRange } = heldFiles(open, 2);
    await readRange('a', 0, 1);
    await readRange('b', 0, 1);
    let release = () => {};
    hold(new Promise<void>((resolve) => (release = resolve)));
    const reading = readRange('a', 0, 1);
    // 'c' pushes out 'b' (a was used since): closed at once; then 'd' pushes out 'a', whose read is under way.
    const later = [readRange('c', 0, 1), readRange('d', 0, 1)];
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(log.closed).toEqual(['b']);
    release();
    expect((await reading).length).toBe(1);
    await Promise.all(later);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(log.closed).toEqual(['b', 'a']);
  });

  it('a file that cannot be opened is not kept: the next read tries again', async () => {
    const { open } = files();
    let fail = true;
    const { readRange } = heldFiles(async (path) => {
      if (fail) throw new Error('EMFILE');
      return open(path);
    });
    await expect(readRange('a', 0, 1)).rejects.toThrow('EMFILE');
    fail = false;
    expect((await readRange('a', 0, 1)).length).toBe(1);
  });
});
