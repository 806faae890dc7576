import { describe, expect, it } from 'vitest';
import { flagsSaid, inFlags } from '../src/cli/options.js';
import { CitiesApiError } from '../src/core/errors.js';
import { PRECOMPUTABLE_ORDERINGS } from '../src/core/ordering.js';
import { ROUTES } from '../src/core/route-table.js';
import { CLOUDFLARE_FREE, firstPagesFor } from '../src/site/asset-budget.js';
import {
  countSiteFiles,
  estimateSiteSize,
  formatBytes,
  OTHER_FILES,
  tooManyFilesAdvice,
  type Sized,
} from '../src/site/size.js';
import { reusableShape } from '../src/site/reusable.js';

const shape = (count: number, pageSizes: number[], orderings: number, compressed = true): Sized => ({
  count,
  pageSizes,
  orderings: PRECOMPUTABLE_ORDERINGS.slice(0, orderings),
  compression: compressed ? 'fast' : 'none',
  mount: '',
});

/** The edge data: index, 17 rank files, 17 layouts of blocks of 240,000 bytes of cities (estimated at 600 bytes a city, 10% slack, at least one block). */
const edge = (cities: number) => 1 + 17 + (cities ? 17 * Math.max(1, Math.ceil((cities * 600 * 1.1) / 240_000)) : 0);

describe('countSiteFiles: pages (every page, last, all) × orderings × (page, .gz, .br) + the other files + the edge data', () => {
  it("the other files are the route table's extras: 7", () =>
    expect(OTHER_FILES).toBe(Object.keys(ROUTES.extras).length));
  it.each<[string, Sized, number]>([
    ['the bundled 48 cities, defaults', shape(48, [10, 20, 50, 100], 33), 2086 + edge(48)],
    ['the bundled 48 cities, without compression', shape(48, [10, 20, 50, 100], 33, false), 700 + edge(48)],
    [
      "the bundled 48 cities, a base path Netlify's files would misread (/:v1/api): without _headers (_redirects only hides files)",
      { ...shape(48, [10, 20, 50, 100], 33), mount: '/:v1/api' },
      2086 - 1 + edge(48),
    ],
    [
      'the bundled 48 cities, a wildcard in the base path (/a*b): without _headers',
      { ...shape(48, [10, 20, 50, 100], 33), mount: '/a*b' },
      2086 - 1 + edge(48),
    ],
    [
      "the bundled 48 cities, a colon inside a segment (/a:b), Netlify's literal text: with them",
      { ...shape(48, [10, 20, 50, 100], 33), mount: '/a:b' },
      2086 + edge(48),
    ],
    ['an empty dataset still has page 1, last and all, and no block', shape(0, [10], 1, false), 5 + 7 + 18],
    [
      '140k cities, the benchmark shape',
      shape(135_233, [10, 100], 5),
      (13_524 + 1 + 13_524 + 1 + 1_353 + 1 + 1) * 5 * 3 + 7 + edge(135_233),
    ],
    [
      '140k cities, every ordering and the default sizes',
      shape(135_233, [10, 20, 50, 100], 33),
      (13_524 * 2 + 6_762 + 2_705 + 1_353 + 5 + 1) * 33 * 3 + 7 + edge(135_233),
    ],
  ])('%s', (_, s, files) => expect(countSiteFiles(s)).toBe(files));
  it('140k cities hold at most 6,324 blocks', () => expect(edge(135_233)).toBe(18 + 6_324));
});

describe('a live URL CloudFront cannot take as an origin: the site leaves out its CloudFront Function, and is counted without it', () => {
  const site = {
    ...shape(48, [10, 20, 50, 100], 33),
    baseUrl: 'http://x',
    collation: 'locale',
    defaultPageSize: 10,
  } as const;
  const withLive = (liveUrl: string | null) => ({ ...site, liveUrl });
  it.each<[string, () => number, number]>([
    ['no live URL: with the function', () => countSiteFiles(withLive(null)), 2086 + edge(48)],
    ['a DNS name: with the function', () => countSiteFiles(withLive('https://live.example.org')), 2086 + edge(48)],
    ['an IPv4 address: without it', () => countSiteFiles(withLive('http://10.0.0.5:8080')), 2086 - 1 + edge(48)],
    ['an IPv6 address: without it', () => countSiteFiles(withLive('http://[::1]:8080')), 2086 - 1 + edge(48)],
    [
      "an IPv4 address, the old site's reusable share: its pages only (no extra, the function neither)",
      () => countSiteFiles(reusableShape(withLive('http://10.0.0.5:8080'), withLive('http://10.0.0.5:8080'))!),
      2086 - OTHER_FILES,
    ],
  ])('%s', (_, count, files) => expect(count()).toBe(files));
});

describe('estimateSiteSize', () => {
  it('counts each city once per page size and once in all.json, plus envelopes and last pages', () => {
    // 100 cities of 99 bytes (100 with the comma); sizes default 10 and 50; one ordering.
    const size = estimateSiteSize(shape(100, [50], 1), 9_900, 20, 0.5);
    expect(size.pages).toBe(10 + 1 + 2 + 1 + 1);
    expect(size.jsonBytes).toBe(15 * (2 * 80 + 40) + 100 * (100 * 3 + 10 + 50));
    expect(size.compressedBytes).toBe(Math.round(size.jsonBytes * 0.5));
    // The dataset file (each city and its separator), and the edge data: 17 rank files of a header,
    // 4 bytes a city and a bit a city; 17 layouts of one block (a header, 4 bytes a city, the
    // cities); the index, with 20 bytes per block listed.
    expect(size.dataBytes).toBe(100 * 100 + 17 * (16 + 400 + 13) + 17 * (16 + 400 + 9_900) + 400 + 20 * 17);
  });

  it('has no compressed bytes when compression is off', () => {
    expect(estimateSiteSize(shape(100, [50], 1, false), 9_900, 20, 0.5).compressedBytes).toBe(0);
  });
});

describe('tooManyFilesAdvice names what to drop', () => {
  it.each<[string, Sized, number, RegExp[]]>([
    [
      'fewer orderings, with an exact list',
      shape(48, [10, 20, 50, 100], 33),
      1000,
      [/at most 15 of the 33 orderings \(e\.g\. --orderings default,name_en,-name_en,(?:-?name_\w+,){11}-?name_\w+\)/],
    ],
    [
      'the smallest page sizes, keeping the largest',
      shape(48, [10, 20, 50, 100], 33),
      1000,
      [/--page-sizes 100 \(933 files\)/],
    ],
    [
      '140k cities, defaults: 8 orderings, as the default page size alone is too many',
      shape(135_233, [10, 20, 50, 100], 33),
      1_000_000,
      [/at most 8 of the 33 orderings/, /^(?!.*--page-sizes)/],
    ],
    ['no compression when that alone fits', shape(48, [10, 20, 50, 100], 33), 1000, [/--compression none/]],
    [
      'raising the limit, with the count',
      shape(48, [10, 20, 50, 100], 33),
      10,
      [/raise --max-files to 2,121/, /Nothing was written\.$/],
    ],
  ])('%s', (_, s, max, patterns) => {
    const advice = flagsSaid(tooManyFilesAdvice(s, max));
    for (const pattern of patterns) expect(advice).toMatch(pattern);
  });

  it('offers no ordering count when not even one ordering fits', () => {
    expect(tooManyFilesAdvice(shape(135_233, [10], 1), 1000)).not.toMatch(/orderings/);
  });
});

describe('formatBytes', () => {
  it.each<[number, string]>([
    [0, '0 B'],
    [999, '999 B'],
    [7_300_000, '7.3 MB'],
    [2_046_000_000, '2.0 GB'],
    [123_400_000, '123 MB'],
  ])('%d bytes → %s', (bytes, text) => expect(formatBytes(bytes)).toBe(text));
});

describe('firstPagesFor: the most first pages of each list a site for Cloudflare holds in its 20,000 files', () => {
  it.each<[string, Sized, number, number | undefined]>([
    ['the bundled 48 cities: every page fits', shape(48, [10, 20, 50, 100], 33, false), 48 * 600, undefined],
    // 165 lists (33 orderings × 5 sizes), each with its last page; 33 pages of every city; the
    // manifest, dataset, openapi.json and not-precomputed.json; the edge data at 600 bytes a city.
    [
      '140k cities, every ordering, the default sizes',
      shape(135_233, [10, 20, 50, 100], 33, false),
      135_233 * 600,
      Math.floor((20_000 - 4 - edge(135_233) - 33) / 165) - 1,
    ],
    ['140k cities of 525 bytes (the bench dataset)', shape(135_233, [10, 20, 50, 100], 33, false), 71_000_000, 86],
  ])('%s', (_, s, cityBytes, firstPages) => {
    const found = firstPagesFor('cloudflare', s, cityBytes);
    expect(found).toBe(firstPages);
    if (found !== undefined) {
      expect(countSiteFiles({ ...s, host: 'cloudflare', firstPages: found }, cityBytes)).toBeLessThanOrEqual(
        CLOUDFLARE_FREE.files,
      );
      expect(countSiteFiles({ ...s, host: 'cloudflare', firstPages: found + 1 }, cityBytes)).toBeGreaterThan(
        CLOUDFLARE_FREE.files,
      );
    }
  });

  // Too large a dataset to build in a test: its error read as build() says it, and as the CLI does.
  it.each<[string, (error: CitiesApiError) => string, RegExp]>([
    ['to a library caller', (error) => error.message, /at most 20,000 files.*fewer `orderings` or `pageSizes`/],
    ['by the CLI', inFlags, /at most 20,000 files.*fewer --orderings or --page-sizes/],
  ])(
    'a dataset whose edge data alone is over the budget: refused, naming the limit and what to do %s',
    (_, said, message) => {
      let error: unknown;
      try {
        firstPagesFor('cloudflare', shape(5_000_000, [10], 1, false), 5_000_000 * 600);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(CitiesApiError);
      expect(said(error as CitiesApiError)).toMatch(message);
      expect(said(error as CitiesApiError)).not.toContain('\u0000');
    },
  );
});
