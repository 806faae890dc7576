import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { Orders } from '../src/core/orders.js';
import { answerListing, bodyBytes, pageOf } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { ROUTES } from '../src/core/route-table.js';
import { edgeFiles, LAYOUTS, type EdgeIndex, type Layout } from '../src/site/edge-files.js';
import { tagBytes } from '../src/site/edge-format.js';
import type { OpenedFile } from '../src/site/edge-blocks.js';
import { parseIndex } from '../src/site/edge-index.js';
import { pageCities, type Loaded } from '../src/site/edge-page.js';
import { FieldRanks } from '../src/site/edge-ranks.js';
import { RowReader } from '../src/site/edge-rows.js';
import { EdgeSource, type EdgeSourceOptions } from '../src/site/edge-source.js';
import { BASE, streamed } from './edge-answers.js';
import { makeCity } from './helpers.js';

// The work a multi-field edge page does before and as it reads its cities (issue #25): its
// indices cut into runs of the layout it picks once, not again to read them, and the default
// layout's blocks (a full block's cities, which the pick weighs others by) walked once per index,
// not once per page. Measured as the reads of each layout's block starts (the index's arrays,
// counted by a Proxy): a cut reads a few a run of the page's cities, a walk two a block of the layout.

const TAG = '0011223344556677';
const N = 6_000;

/** Fields tied in a few groups each (2 to 9): an ordering of them all and name_fr reads 8 rank files. */
const TIED = { name_it: 3, name_sp: 4, name_ru: 5, name_pt: 6, name_ms: 2, name_tr: 9 } as const;

/**
 * 6,000 cities of ~4 KB: name_fr and name_de orders of their own (name_de in 8 tie groups), the
 * TIED fields in a few groups each, the others name_en's.
 */
let made: { index: CityIndex; files: Map<string, Uint8Array> } | undefined;
function files(): Map<string, Uint8Array> {
  made ??= build();
  return made.files;
}

function build() {
  const pad = 'x'.repeat(300);
  const index = new CityIndex(
    CityTable.fromCities(
      Array.from({ length: N }, (_, i) =>
        makeCity(i + 1, {
          name: `${pad}${String((i * 7919) % N).padStart(5, '0')}`,
          name_fr: `F${String((i * 31) % N).padStart(5, '0')}`,
          name_de: `D${i % 8}`,
          ...Object.fromEntries(Object.entries(TIED).map(([field, groups]) => [field, `${field}${i % groups}`])),
          top: i % 7 === 0,
        }),
      ),
    ),
    'codepoint',
  );
  return { index, files: new Map([...edgeFiles(index, TAG)].map((f) => [f.path, new Uint8Array(bodyBytes(f.body))])) };
}

/** A build loaded as an edge source loads it, each layout's block starts counting their reads. */
function loaded(site: Map<string, Uint8Array>) {
  const read = async (path: string) => site.get(path)!;
  const index = parseIndex(site.get(ROUTES.edge.index)!);
  const reads = new Map<Layout, number>();
  const layouts = index.layouts as Record<Layout, EdgeIndex['layouts'][Layout]>;
  for (const layout of LAYOUTS) {
    const starts = layouts[layout];
    if (!Array.isArray(starts)) continue;
    reads.set(layout, 0);
    layouts[layout] = new Proxy(starts, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads.set(layout, reads.get(layout)! + 1);
        return Reflect.get(target, key, receiver);
      },
    });
  }
  const tag = tagBytes(TAG);
  const fields = new FieldRanks(read, index, tag);
  const build: Loaded = { index, fields, orders: new Orders(fields, 4), rows: new RowReader(read, tag, {}) };
  /** The reads of each layout's starts one page makes, from its pick to its last city. */
  const page = async (query: string) => {
    for (const layout of reads.keys()) reads.set(layout, 0);
    let cities = 0;
    for await (const batch of await pageCities(build, pageOf(N, parseQuery(query))!)) cities += batch.length;
    return { cities, reads: new Map(reads) };
  };
  return { index, page, build };
}

describe('a multi-field edge page', () => {
  const layoutOf = (index: EdgeIndex, field: Layout) => {
    const entry = index.layouts[field];
    return typeof entry === 'string' ? entry : field;
  };

  // name_de ties in 8 groups: the pick weighs its layout (the page's cities scattered over the
  // group's blocks: a run or two a city) and name_fr's, and takes name_de's. Cut twice (the pick,
  // then the reads), its starts were read 3,976 and 4,870 times for these pages (40 and 37 a city);
  // cut once, 2,238 and 2,760 (22 and 21).
  it.each([
    ['ordering=name_de,name_fr&page_size=100&page=7', 100],
    ['ordering=-name_de,-name_fr&page_size=130&page=20', 130],
  ])(
    '%s: its indices cut into runs once, for the pick and the reads (under 30 reads of its layout a city)',
    async (query, size) => {
      const { index, page } = loaded(files());
      await page(query);
      const { cities, reads } = await page(query);
      expect(cities).toBe(size);
      expect(reads.get(layoutOf(index, 'name_de'))! / cities).toBeLessThan(30);
    },
  );

  // The default ordering's layout is not among this page's (name_de's, name_fr's): read for a
  // full block's cities, it was walked whole again by every page (236 reads here, 2 a block).
  it.each([
    ['name_de then name_fr', 'ordering=name_de,name_fr&page_size=50&page=9'],
    ['name_fr then name_de', 'ordering=-name_fr,name_de&page_size=10&page=3'],
  ])('%s: the default layout read once per index, by the first page, never by the next', async (_, query) => {
    const { index, page } = loaded(files());
    expect([layoutOf(index, 'name_de'), layoutOf(index, 'name_fr')]).not.toContain(ROUTES.absent);
    const first = await page(query);
    expect(first.reads.get(ROUTES.absent)).toBeGreaterThan(0);
    const again = await page(query.replace(/page=\d+/, 'page=2'));
    expect(again.reads.get(ROUTES.absent)).toBe(0);
  });
});

// A multi-field page's indices into the layout it reads (a layout's position of each of its
// cities) are written into an array of the reader's pool and given back once the page is read:
// a new array per page (540 KB for every city at 135,000) outlived V8's young collections and,
// dead, waited in the old generation for a full one (under deno serve, the isolate's external
// memory rose 0.6 MB an answer until one came). Two pages read at once never share one.
describe("a multi-field page's indices, in arrays given back once it is read", () => {
  const QUERY = 'ordering=name_de,name_fr&page_size=2000&page=2';
  /** Page `query` started: the indices its reads were given, and a way to read it to its end (or stop it after its first batch). */
  const started = async (build: Loaded, query: string) => {
    const given: ArrayLike<number>[] = [];
    const cities = build.rows.cities.bind(build.rows);
    build.rows.cities = (layout, indices, ...rest) => (given.push(indices), cities(layout, indices, ...rest));
    const batches = (await pageCities(build, pageOf(N, parseQuery(query))!))[Symbol.asyncIterator]();
    await batches.next();
    build.rows.cities = cities;
    const indices = given[0] as Uint32Array;
    return {
      indices: [...indices],
      buffer: indices.buffer,
      end: async () => {
        while (!(await batches.next()).done);
      },
      stop: async () => void (await batches.return?.()),
    };
  };

  it.each<[string, 'read' | 'stopped' | 'open', boolean]>([
    ['two pages in a row: the second in an array an earlier page took', 'read', true],
    ['a page stopped after its first batch (its client gone): its array taken again', 'stopped', true],
    ['two pages read at once: each in its own array, neither overwritten', 'open', false],
  ])('%s', async (_, first, reused) => {
    const { build, page } = loaded(files());
    // The arrays the pages' indices were written into (a page weighing two layouts takes one for each).
    const taken = new Set<ArrayBufferLike>();
    const take = build.rows.indexPool.take.bind(build.rows.indexPool);
    build.rows.indexPool.take = (length) => {
      const indices = take(length);
      taken.add(indices.buffer);
      return indices;
    };
    // A first page, of another size: the next pages' arrays are views of its.
    await page(QUERY.replace('page_size=2000&page=2', 'page_size=2500&page=1'));
    const made = taken.size;
    const one = await started(build, QUERY);
    if (first === 'read') await one.end();
    if (first === 'stopped') await one.stop();
    const two = await started(build, QUERY.replace('page=2', 'page=1'));
    const intact = one.indices.join() === [...new Uint32Array(one.buffer, 0, one.indices.length)].join();
    await Promise.all([first === 'open' && one.end(), two.end()]);
    expect(taken.size === made).toBe(reused);
    if (first === 'open') {
      expect(two.buffer).not.toBe(one.buffer);
      expect(intact).toBe(true);
    }
  });
});

/** An operation on a file (an open, a read, a range) that takes 1 ms, the most under way at once counted. */
function inFlight() {
  const count = { now: 0, most: 0 };
  const timed = async <T>(work: () => T | Promise<T>): Promise<T> => {
    count.most = Math.max(count.most, ++count.now);
    try {
      await sleep(1);
      return await work();
    } finally {
      count.now--;
    }
  };
  return { count, timed };
}

const ALL_TIED = `ordering=name_de,${Object.keys(TIED).join(',')},name_fr`;

describe('every read and open of a page, one of its 6 turns', () => {
  // Before: a page holding its files (Deno) opened its first 16 at once, outside the turns, and a
  // page's rank files (up to 16: every field and the default) were read all at once.
  it.each<[string, string, boolean]>([
    [
      'files held open (Deno): a page over more than 16 blocks, its first 16 held before it starts',
      'ordering=name_de,name_fr&page_size=2000&page=1',
      false,
    ],
    ['files held open (Deno): 8 rank files read first', `${ALL_TIED}&page_size=40&page=3`, false],
    ['one layout by ranges (Lambda): 9 rank files read first', `${ALL_TIED}&page_size=40&page=3`, true],
  ])('%s: at most 6 at once', async (_, query, oneLayout) => {
    const site = files();
    const { count, timed } = inFlight();
    const bytes = (path: string) => {
      const file = site.get(path);
      if (!file) throw new Error(`no file ${path}`);
      return file;
    };
    const open = async (path: string): Promise<OpenedFile> => {
      const file = await timed(() => bytes(path));
      return {
        range: (start, end) => timed(() => file.subarray(start, end)),
        read: () => timed(() => file),
        close: () => undefined,
      };
    };
    const options: EdgeSourceOptions = oneLayout
      ? { oneLayout, readRange: (path, start, end) => timed(() => bytes(path).subarray(start, end)) }
      : { open };
    const source = new EdgeSource((path) => timed(() => bytes(path)), { cacheBytes: 0, ...options });
    const answer = await streamed(source, query);
    expect(answer.body.equals(bodyBytes(answerListing(made!.index, parseQuery(query), BASE).body))).toBe(true);
    expect(count.most).toBeLessThanOrEqual(6);
  });
});
