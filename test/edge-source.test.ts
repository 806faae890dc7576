import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { Collation } from '../src/core/collation.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { ROUTES } from '../src/core/route-table.js';
import { blockPath } from '../src/site/edge-files.js';
import { RangeIgnored } from '../src/site/edge-ranges.js';
import { EdgeSource, PageTooLarge, type EdgeSourceOptions } from '../src/site/edge-source.js';
import { makeCity } from './helpers.js';
import { BASE, differences, KIT_BASES, kitIndex, kitQueries, queryTable, streamed, tiedIndex } from './edge-answers.js';
import { sharedEdgeSite as siteOf } from './edge-helpers.js';

describe('the edge source answers as answerListing, byte for byte, over the kit datasets', () => {
  it.each(Object.keys(KIT_BASES))("%s: the kit's GET queries, and every ordering × page size × page", async (name) => {
    const index = await kitIndex(name);
    const source = new EdgeSource(siteOf(index).read);
    const queries = [...new Set([...kitQueries(name), ...queryTable(index.count)])];
    expect(await differences(index, source, queries, KIT_BASES[name])).toEqual([]);
  });

  it.each<[string, Collation, EdgeSourceOptions, boolean]>([
    ['cities1234', 'locale', {}, false],
    ['cities48', 'locale', { cacheBytes: 0, concurrency: 1, orderCache: 0 }, false],
    ['cities1234', 'codepoint', { cacheBytes: 0, concurrency: 1, orderCache: 0 }, false],
    ['cities1234', 'codepoint', { cacheBytes: 0, orderCache: 0 }, true],
    ['cities1234', 'locale', { cacheBytes: 0, concurrency: 1, headBytes: 0 }, true],
  ])(
    "%s in %s collation, options %j, by range %s: every ordering × page size × page (no ICU at the edge: the ranks are the build's)",
    async (name, collation, options, ranged) => {
      const index = await kitIndex(name, collation);
      const site = siteOf(index);
      const source = new EdgeSource(site.read, { ...options, ...(ranged && { readRange: site.readRange }) });
      expect(await differences(index, source, queryTable(index.count))).toEqual([]);
    },
  );

  it('random queries (fast-check): orderings of up to 4 terms with junk, page sizes, pages, other parameters', async () => {
    const tied = tiedIndex(3000);
    const indexes = [await kitIndex('cities1234'), await kitIndex('cities48', 'locale'), tied, tied];
    const sources = indexes.map((index, i) => {
      // The last: name_en's tie groups (~76 KB each) in fine blocks, as a build for Cloudflare cuts them.
      const site = siteOf(index, undefined, i === 3 ? 16_000 : undefined);
      // All but one read thin blocks by range.
      return new EdgeSource(site.read, { cacheBytes: 200_000, ...(i !== 1 && { readRange: site.readRange }) });
    });
    const term = fc
      .oneof(fc.constantFrom(...NAME_FIELDS, 'id', 'top', 'x'), fc.string({ maxLength: 4 }))
      .chain((f) => fc.constantFrom(f, `-${f}`, ` ${f} `));
    const size = fc.oneof(fc.integer({ min: -2, max: 3100 }).map(String), fc.constantFrom('abc', '', '1e3', '١٠'));
    const page = fc.oneof(fc.integer({ min: -1, max: 400 }).map(String), fc.constantFrom('last', '', 'x'));
    const query = fc.record({
      ordering: fc.option(fc.array(term, { maxLength: 4 }).map((t) => t.join(','))),
      size: fc.option(size),
      page: fc.option(page),
      extra: fc.option(fc.constantFrom('format=json', 'q=%C3%A9', 'page=2')),
      which: fc.integer({ min: 0, max: indexes.length - 1 }),
    });
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const parts = [
          q.ordering !== null && `ordering=${encodeURIComponent(q.ordering)}`,
          q.size !== null && `page_size=${encodeURIComponent(q.size)}`,
          q.page !== null && `page=${q.page}`,
          q.extra,
        ];
        const text = parts.filter(Boolean).join('&');
        expect(await differences(indexes[q.which]!, sources[q.which]!, [text])).toEqual([]);
      }),
      { numRuns: 400, seed: 12 },
    );
  });
});

const blocks = (reads: string[]) => reads.filter((p) => p.includes('/rows/'));
const rankReads = (reads: string[]) => reads.filter((p) => p.includes('/ranks/'));

describe('a request reads only what it needs', () => {
  it.each<[string, string, (reads: string[]) => void]>([
    [
      "a page of 10 in one field's descending order: the index, that rank file, at most two blocks of its layout",
      'ordering=-name_ar&page_size=10&page=150',
      (reads) => {
        expect(reads.filter((p) => !p.includes('/rows/'))).toEqual([
          ROUTES.edge.index,
          '_cities-api/edge/ranks/name_ar.bin',
        ]);
        expect(blocks(reads).length).toBeLessThanOrEqual(2);
        expect(blocks(reads).every((p) => p.startsWith('_cities-api/edge/rows/name_ar-'))).toBe(true);
      },
    ],
    [
      'a field ascending: no rank file, one or two blocks',
      'ordering=name_ar&page_size=10&page=1500',
      (reads) => {
        expect(rankReads(reads)).toEqual([]);
        expect(blocks(reads).length).toBeLessThanOrEqual(2);
      },
    ],
    [
      'the default ordering: no rank file, its own layout',
      'page=3',
      (reads) => {
        expect(rankReads(reads)).toEqual([]);
        expect(blocks(reads)).toEqual(['_cities-api/edge/rows/default-0.bin']);
      },
    ],
    [
      'a multi-field ordering: the rank files of its terms, blocks of the one layout where its cities lie closest',
      'ordering=name_en,-name_ar,name_fr',
      (reads) => {
        expect(rankReads(reads).sort()).toEqual([
          '_cities-api/edge/ranks/name_ar.bin',
          '_cities-api/edge/ranks/name_en.bin',
          '_cities-api/edge/ranks/name_fr.bin',
        ]);
        // name_en's ties are thousands of cities (ordered there by id): name_ar's layout holds the page in one or two blocks.
        expect(blocks(reads).length).toBeLessThanOrEqual(2);
        expect(blocks(reads).every((p) => p.startsWith('_cities-api/edge/rows/name_ar-'))).toBe(true);
      },
    ],
    ['an invalid page: the index alone', 'page=9999', (reads) => expect(reads).toEqual([ROUTES.edge.index])],
  ])('%s', async (_, query, check) => {
    const { index, site } = tiedSite();
    const source = new EdgeSource(site.read, { cacheBytes: 0 });
    await streamed(source, query);
    check(site.reads);
    expect(await differences(index, source, [query])).toEqual([]);
  });

  // Pages of every kind on a site with large ties (tiedIndex), read with and without ranges: after
  // the one-time reads (index, rank files) each reads at most 3 x its answer + 512 KB (issue #25).
  // Spread thin: -name_en,name_ar puts 1 city in 13 of a run of name_ar's layout on the page, and
  // every other layout scatters it more; whole blocks read 727 KB for a 38 KB answer, ranges 214 KB.
  // The third column: whether reading whole blocks goes over the goal.
  const READS: [string, string, boolean][] = [
    ['the default ordering (-top, name_en)', 'page_size=10&page=777', false],
    ['a field ascending', 'ordering=name_fr&page_size=7&page=1234', false],
    ['a field descending, ties by id', 'ordering=-name_en&page_size=10&page=2000', false],
    ['multi-field', 'ordering=name_ar,-name_en&page_size=10&page=3001', false],
    ['multi-field, its first field in ties of thousands', 'ordering=name_en,-name_ar&page_size=10&page=1234', false],
    ['multi-field, ties of thousands, a large page', 'ordering=-name_en,name_ar&page_size=5000&page=5', false],
    ['every city on one page', 'ordering=-name_ar&page_size=100000', false],
    ['a large page', 'ordering=name_ar,-name_fr&page_size=5000&page=3', false],
    ['multi-field spread thin in every layout', 'ordering=-name_en,name_ar&page_size=100&page=77', true],
    ['multi-field spread thin, a page of 10', 'ordering=-name_en,name_ar&page_size=10&page=771', false],
    ['multi-field spread thin, 3 terms', 'ordering=-name_en,name_ar,-name_fr&page_size=300&page=31', true],
    ['-top first', 'ordering=-top,-name_ar&page_size=50&page=97', false],
    ['-top and a field in ties', 'ordering=-top,name_en,-name_ar&page_size=100&page=57', true],
  ];

  it.each(
    READS.flatMap(([what, query, over]) => [[what, query, over, true] as const, [what, query, over, false] as const]),
  )(
    '%s (%s; over by whole blocks: %s), by range: %s: bytes read after the one-time reads vs 3 x the answer + 512 KB',
    async (_, query, over, ranges) => {
      const { index, site } = tiedSite();
      const source = new EdgeSource(site.read, { cacheBytes: 0, ...(ranges && { readRange: site.readRange }) });
      await streamed(source, query.replace(/page=\d+/, 'page=1'));
      [site.reads.length, site.counted.bytes] = [0, 0];
      const answer = await streamed(source, query);
      expect(rankReads(site.reads)).toEqual([]);
      expect(answer.body.equals(bodyBytes(answerListing(index, parseQuery(query), BASE).body))).toBe(true);
      const within = site.counted.bytes <= 3 * answer.body.length + 512_000;
      // Read by range, every page keeps within; by whole blocks, those marked over do not (measured: the gap ranges close).
      expect({ within, bytes: site.counted.bytes }).toEqual({ within: ranges || !over, bytes: site.counted.bytes });
    },
  );

  it('a platform that ignores Range (sends whole files): the block sent is used, and whole blocks are read from then on', async () => {
    const { index, site } = tiedSite();
    let ranges = 0;
    const readRange = async (path: string) => {
      ranges++;
      throw new RangeIgnored(await site.read(path));
    };
    const source = new EdgeSource(site.read, { cacheBytes: 0, concurrency: 1, readRange });
    const queries = [
      'ordering=-name_en,name_ar&page_size=100&page=77',
      'ordering=-name_en,name_ar&page_size=10&page=771',
    ];
    expect(await differences(index, source, queries)).toEqual([]);
    expect(ranges).toBe(1);
  });

  it('terms after one whose values are all distinct are not read', async () => {
    const index = new CityIndex(
      CityTable.fromCities(Array.from({ length: 600 }, (_, i) => makeCity(i + 1, { name: `C${i}`, name_ar: 'same' }))),
      'codepoint',
    );
    const site = siteOf(index);
    expect(await differences(index, new EdgeSource(site.read), ['ordering=name_en,-name_ar'])).toEqual([]);
    expect(rankReads(site.reads)).toEqual([]);
  });

  it('the block cache stays within its budget, and cached blocks are not read again', async () => {
    const { index, site } = tiedSite();
    const blockBytes = site.files.get(blockPath('name_ar', 0))!.length;
    const source = new EdgeSource(site.read, { cacheBytes: blockBytes * 3.5 });
    await differences(index, source, ['ordering=name_ar&page_size=3']);
    const before = site.reads.length;
    await differences(index, source, ['ordering=name_ar&page_size=3']);
    expect(site.reads.length).toBe(before);
    expect(
      await differences(index, source, ['ordering=-name_en&page_size=200&page=7', 'ordering=name_ar&page_size=3']),
    ).toEqual([]);
  });
});

describe('what the edge cannot answer is a clear error, and a failure does not stick', () => {
  it('a page above maxPageCities rejects with PageTooLarge before reading a rank file (a stream has no such limit)', async () => {
    const index = tiedIndex(3000);
    const site = siteOf(index);
    const source = new EdgeSource(site.read, { maxPageCities: 500 });
    await expect(source.answer(parseQuery('page_size=501'), BASE)).rejects.toThrow(PageTooLarge);
    await expect(source.answer(parseQuery('page_size=100000'), BASE)).rejects.toThrow(
      /a page of 3000 cities is more than the 500 an edge function answers/,
    );
    expect(site.reads).toEqual([ROUTES.edge.index]);
    expect(await differences(index, source, ['page_size=500&page=last'])).toEqual([]);
    expect(
      (await streamed(source, 'page_size=100000')).body.equals(
        bodyBytes(answerListing(index, parseQuery('page_size=100000'), BASE).body),
      ),
    ).toBe(true);
  });

  it('a read that fails once (index, rank file, block) fails that request only', async () => {
    const index = tiedIndex(3000);
    const site = siteOf(index);
    const failing = new Set([ROUTES.edge.index, '_cities-api/edge/ranks/name_fr.bin', blockPath('name_en', 3)]);
    const source = new EdgeSource(async (path) => {
      if (failing.delete(path)) throw new Error(`unreachable ${path}`);
      return site.read(path);
    });
    const query = parseQuery('ordering=-name_fr&page_size=3000');
    await expect(source.answer(query, BASE)).rejects.toThrow(/unreachable _cities-api\/edge\/index\.json/);
    await expect(source.answer(query, BASE)).rejects.toThrow(/unreachable .*name_fr\.bin/);
    await expect(source.answer(query, BASE)).rejects.toThrow(/unreachable .*rows\/name_en-3\.bin/);
    expect(await differences(index, source, ['ordering=-name_fr&page_size=3000'])).toEqual([]);
  });

  it('files of two builds are never combined', async () => {
    const index = tiedIndex(600);
    const older = siteOf(index, 'aaaaaaaaaaaaaaaa');
    const newer = siteOf(index, 'bbbbbbbbbbbbbbbb');
    const source = new EdgeSource(async (path) => (path.includes('/rows/') ? older : newer).read(path));
    await expect(source.answer(parseQuery(''), BASE)).rejects.toThrow(
      /rows\/default-\d+\.bin is from another build than the edge index/,
    );
    await expect(source.stream(parseQuery('ordering=name_ar'), BASE)).rejects.toThrow(/from another build/);
  });

  it('indexFor prepares one page: asked for another, its index throws instead of answering wrong', async () => {
    const index = tiedIndex(600);
    const prepared = await new EdgeSource(siteOf(index).read).indexFor(parseQuery('ordering=name_ar&page=2'));
    expect(
      Buffer.from(bodyBytes(answerListing(prepared, parseQuery('ordering=name_ar&page=2'), BASE).body)).equals(
        bodyBytes(answerListing(index, parseQuery('ordering=name_ar&page=2'), BASE).body),
      ),
    ).toBe(true);
    expect(() => answerListing(prepared, parseQuery('ordering=name_ar&page=3'), BASE)).toThrow(/holds another page/);
    expect(() => answerListing(prepared, parseQuery('ordering=-name_ar&page=2'), BASE)).toThrow(/holds another page/);
  });

  it('a missing or foreign index says what to do', async () => {
    await expect(
      new EdgeSource(async () => new TextEncoder().encode('<!doctype html>')).answer([], BASE),
    ).rejects.toThrow(/index\.json is not JSON: deploy the files of a site built by this version/);
    await expect(new EdgeSource(async () => new TextEncoder().encode('{"format":1}')).answer([], BASE)).rejects.toThrow(
      /not an edge index of format 2/,
    );
  });
});

describe('a self-hosted site rebuilt under a running source (indexVersion, open)', () => {
  /** A site directory whose files a rebuild replaces at once; `open` holds what a file was when opened, as a file handle does. */
  function rebuiltSite(first: ReturnType<typeof siteOf>) {
    let files = first.files;
    let version = 1;
    const read = async (path: string) => files.get(path) ?? Promise.reject(new Error(`no file ${path}`));
    return {
      read,
      open: async (path: string) => {
        const bytes = await read(path);
        return {
          range: async (start: number, end: number) => bytes.subarray(start, end),
          read: async () => bytes,
          close: () => undefined,
        };
      },
      indexVersion: async () => String(version),
      rebuild(next: ReturnType<typeof siteOf>) {
        files = next.files;
        version++;
      },
    };
  }

  const before = tiedIndex(3000);
  const after = tiedIndex(2000);
  const pageOfAll = parseQuery('ordering=-name_ar&page_size=5000');
  const bytesOf = (index: CityIndex) => Buffer.from(bodyBytes(answerListing(index, pageOfAll, BASE).body));

  it.each<[string, boolean, string | null, EdgeSourceOptions]>([
    ['with files held open: the request under way finishes on its build, the next is the new one', true, null, {}],
    ['reading by path only: the request under way fails rather than mixing builds', false, 'from another build', {}],
    [
      'more blocks than it opens before its first byte: the request under way fails rather than mixing builds',
      true,
      'from another build',
      { holdFiles: 1 },
    ],
  ])('%s', async (_, holdOpen, failure, options) => {
    const site = rebuiltSite(siteOf(before, 'aaaaaaaaaaaaaaaa'));
    const source = new EdgeSource(site.read, {
      indexVersion: site.indexVersion,
      cacheBytes: 0,
      concurrency: 1,
      ...(holdOpen && { open: site.open }),
      ...options,
    });
    const { body } = await source.stream(pageOfAll, BASE);
    const parts: Uint8Array[] = [];
    const reading = body[Symbol.asyncIterator]();
    parts.push((await reading.next()).value!);
    site.rebuild(siteOf(after, 'bbbbbbbbbbbbbbbb'));
    const rest = (async () => {
      for (let next = await reading.next(); !next.done; next = await reading.next()) parts.push(next.value);
    })();
    if (failure) await expect(rest).rejects.toThrow(failure);
    else {
      await rest;
      expect(Buffer.concat(parts).equals(bytesOf(before))).toBe(true);
    }
    expect((await streamed(source, 'ordering=-name_ar&page_size=5000')).body.equals(bytesOf(after))).toBe(true);
    expect(await source.count()).toBe(2000);
  });

  it('without indexVersion an instance keeps the build it read first (a platform whose deploys are new instances)', async () => {
    const site = rebuiltSite(siteOf(before, 'aaaaaaaaaaaaaaaa'));
    const source = new EdgeSource(site.read);
    expect(await source.count()).toBe(3000);
    site.rebuild(siteOf(after, 'bbbbbbbbbbbbbbbb'));
    expect(await source.count()).toBe(3000);
  });

  it('a rebuild between reading the index and opening the page files: the request is answered from the new build', async () => {
    const site = rebuiltSite(siteOf(before, 'aaaaaaaaaaaaaaaa'));
    let rebuildOnOpen = true;
    const source = new EdgeSource(site.read, {
      indexVersion: site.indexVersion,
      open: async (path) => {
        if (rebuildOnOpen) [rebuildOnOpen] = [false, site.rebuild(siteOf(after, 'bbbbbbbbbbbbbbbb'))];
        return site.open(path);
      },
    });
    expect((await streamed(source, 'ordering=-name_ar&page_size=5000')).body.equals(bytesOf(after))).toBe(true);
  });
});

/** tiedIndex(40_000) and its edge files, made once for the file (seconds each): every case reads them through its own counter, none changes them. */
function tiedSite() {
  const index = tiedIndex(40_000);
  return { index, site: siteOf(index) };
}
