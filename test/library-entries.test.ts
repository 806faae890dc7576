import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';
import { CitiesApiError } from '../src/index.js';
import { makeCity, testSpec } from './helpers.js';

// The package's pure exports as a JavaScript caller may call them, no type checking its arguments:
// a wrong one (a wrong type, a missing field, NaN, a negative number, an object whose getter
// throws) is a CitiesApiError naming the function and the argument and saying what it must be;
// never a TypeError from deep inside, nor a wrong answer made of `undefined`.

const spec = testSpec();
const manifest = { settings: spec, dataset: { count: spec.count, sha256: '' } };
/** An object every read of which throws, as a caller's getter may. */
const throwing = new Proxy(
  {},
  {
    get() {
      throw new Error('getter failed');
    },
  },
);
const loose = (f: unknown) => f as (...args: unknown[]) => unknown;
const index = new api.CityIndex(api.CityTable.fromCities([]));

describe('an export called with a wrong argument: a CitiesApiError naming it', () => {
  it.each<[string, () => unknown, RegExp]>([
    [
      'new CityIndex() of nothing',
      () => new (api.CityIndex as never as new (...a: unknown[]) => unknown)(),
      /new CityIndex\(\)'s argument `table` must be a CityTable .*not nothing/,
    ],
    [
      'new CityIndex() of an array of cities',
      () => new api.CityIndex([{ id: 1 }] as never),
      /argument `table` must be a CityTable \(await readDataset\(file\), or CityTable.fromCities/,
    ],
    [
      'new CityIndex() with an unknown collation',
      () => new api.CityIndex(api.CityTable.fromCities([]), 'xx' as never),
      /argument `collation` must be locale or codepoint, not the string "xx"/,
    ],
    [
      'CityTable.fromCities() of nothing',
      () => loose(api.CityTable.fromCities)(),
      /CityTable.fromCities\(\)'s argument `cities` must be an array of cities, not nothing/,
    ],
    [
      'CityTable.fromCities() of a city missing its names',
      () => api.CityTable.fromCities([{ id: 1 }] as never),
      /invalid dataset cities \(21 problems.*\n {2}cities: record 0 \(id 1\): field name_ar, value missing: is missing/,
    ],
    [
      'CityTable.fromCities() of a null',
      () => api.CityTable.fromCities([null] as never),
      /cities: record 0: field \(city\), value null: is not an object of city fields/,
    ],
    [
      'CityTable.fromCities() of two cities of one id',
      () => api.CityTable.fromCities([makeCity(1), makeCity(1)]),
      /record 1 \(id 1\): field id, value 1: duplicates the id of record 0/,
    ],
    [
      'CityTable.fromDatasetFile() of a string',
      () => loose(api.CityTable.fromDatasetFile)('x'),
      /CityTable.fromDatasetFile\(\)'s argument `file` must be the bytes of a site's dataset file/,
    ],
    [
      'new CityTable() of nothing',
      () => new (api.CityTable as never as new () => unknown)(),
      /new CityTable\(\)'s argument `count` must be a whole number of cities/,
    ],
    [
      'answerListing() of no index',
      () => loose(api.answerListing)(undefined, []),
      /answerListing\(\)'s argument `index` must be a CityIndex/,
    ],
    [
      'answerListing() of a query string, not pairs',
      () => loose(api.answerListing)(index, 'page=2', 'https://example.org'),
      /argument `pairs` must be an array of \[name, value\] string pairs/,
    ],
    [
      'answerListing() of a pair holding a number',
      () => loose(api.answerListing)(index, [['page', 2]], 'https://example.org'),
      /argument `pairs` must be/,
    ],
    [
      'answerListing() without a base URL',
      () => loose(api.answerListing)(index, []),
      /argument `baseUrl` must be an absolute http\(s\) URL/,
    ],
    [
      'answerListing() with a base URL not a URL',
      () => api.answerListing(index, [], 'example.org'),
      /argument `baseUrl` must be an absolute http\(s\) URL .*not the string "example.org"/,
    ],
    [
      'paginate() of a negative count',
      () => api.paginate(-1, 10, '1'),
      /paginate\(\)'s argument `count` must be a whole number of cities, 0 or more, not -1/,
    ],
    [
      'paginate() of NaN cities',
      () => api.paginate(Number.NaN, 10, '1'),
      /argument `count` must be a whole number .*not NaN/,
    ],
    [
      'paginate() of a page size of 0',
      () => api.paginate(10, 0, '1'),
      /argument `pageSize` must be a page size, a whole number 1 or more, not 0/,
    ],
    [
      'paginate() of a page number, not its text',
      () => loose(api.paginate)(10, 5, 2),
      /argument `pageParam` must be a string, not 2/,
    ],
    [
      'pageSizeFrom() of a number',
      () => loose(api.pageSizeFrom)(5),
      /pageSizeFrom\(\)'s argument `param` must be a string, not 5/,
    ],
    [
      'pageSizeFrom() with a default of -1',
      () => api.pageSizeFrom('x', -1),
      /argument `defaultSize` must be a page size/,
    ],
    [
      'parseOrdering() of a number',
      () => loose(api.parseOrdering)(5),
      /parseOrdering\(\)'s argument `param` must be a string, not 5/,
    ],
    [
      'orderingKey() of a string',
      () => loose(api.orderingKey)('name_en'),
      /orderingKey\(\)'s argument `ordering` must be an Ordering/,
    ],
    ['parseQuery() of nothing', () => loose(api.parseQuery)(), /parseQuery\(\)'s argument `qs` must be a query string/],
    ['parseQuery() of null', () => loose(api.parseQuery)(null), /argument `qs` must be a query string/],
    [
      'listingUrl() of nothing',
      () => loose(api.listingUrl)(),
      /listingUrl\(\)'s argument `baseUrl` must be an absolute/,
    ],
    [
      'bodyBytes() of nothing',
      () => loose(api.bodyBytes)(),
      /bodyBytes\(\)'s argument `body` must be an answer's body/,
    ],
    [
      'staticPathFor() with the spec first',
      () => loose(api.staticPathFor)(spec, []),
      /staticPathFor\(\)'s argument `pairs` must be/,
    ],
    [
      'staticPathFor() of a spec without page sizes',
      () => loose(api.staticPathFor)([], { ...spec, pageSizes: undefined }),
      /argument `layout` must be a SiteSpec .*whose `pageSizes` is an array of page sizes/,
    ],
    [
      'specOf() of nothing',
      () => loose(api.specOf)(),
      /specOf\(\)'s argument `manifest` must be a Manifest \(readManifest\(dir\)\), not nothing/,
    ],
    [
      'specOf() of a manifest without its count',
      () => loose(api.specOf)({ settings: spec, dataset: {} }),
      /whose `dataset` is an object whose `count` is a whole number of cities, 0 or more \(not nothing\)$/,
    ],
    [
      'specOf() of a manifest whose getter throws',
      () => loose(api.specOf)(throwing),
      /specOf\(\) could not read its arguments: getter failed/,
    ],
    [
      'siteSpec() of settings with a base URL not a URL',
      () => api.siteSpec({ ...spec, baseUrl: 'x' }, 3),
      /siteSpec\(\)'s argument `settings` must be .*whose `baseUrl` is an absolute http\(s\) URL/,
    ],
    [
      'siteSpec() of a negative count',
      () => api.siteSpec(spec, -3),
      /siteSpec\(\)'s argument `count` must be a whole number of cities, 0 or more, not -3/,
    ],
    [
      'nginxConfig() of nothing',
      () => loose(api.nginxConfig)(),
      /nginxConfig\(\)'s argument `spec` must be a SiteSpec/,
    ],
    [
      'nginxConfig() without options',
      () => loose(api.nginxConfig)(spec),
      /nginxConfig\(\)'s argument `options` must be an object, not nothing/,
    ],
    [
      'cloudFrontFunction() of an empty object',
      () => loose(api.cloudFrontFunction)({}),
      /cloudFrontFunction\(\)'s argument `spec` must be a SiteSpec .*whose `baseUrl`/,
    ],
    [
      'cloudFrontFunction() of a spec of NaN cities',
      () => api.cloudFrontFunction({ ...spec, count: Number.NaN }),
      /whose `count` is a whole number of cities, 0 or more \(not NaN\)/,
    ],
    [
      'netlifyHeaders() of nothing',
      () => loose(api.netlifyHeaders)(),
      /netlifyHeaders\(\)'s argument `spec` must be a SiteSpec/,
    ],
    [
      'netlifyRedirects() of a spec with orderings a string',
      () => loose(api.netlifyRedirects)({ ...spec, orderings: 'all' }),
      /whose `orderings` is an array of orderings/,
    ],
    [
      'openApiDocument() of a spec whose getter throws',
      () => loose(api.openApiDocument)(throwing),
      /openApiDocument\(\) could not read its arguments: getter failed/,
    ],
    [
      'formatProblem() of nothing',
      () => loose(api.formatProblem)(),
      /formatProblem\(\)'s argument `problem` must be a Problem, not nothing/,
    ],
  ])('%s', (_, call, message) => {
    let error: unknown;
    try {
      call();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CitiesApiError);
    expect((error as Error).message).toMatch(message);
  });

  it.each<[string, () => Promise<unknown>, RegExp]>([
    [
      'readDataset() of nothing',
      () => loose(api.readDataset)() as Promise<unknown>,
      /readDataset\(\)'s argument `file` must be a string, not nothing/,
    ],
    [
      'readDataset() with options a number',
      () => loose(api.readDataset)(api.SAMPLE_DATASET, 5) as Promise<unknown>,
      /argument `options` must be an object, not 5/,
    ],
    [
      'readDataset() with onProgress not a function',
      () => loose(api.readDataset)(api.SAMPLE_DATASET, { onProgress: 1 }) as Promise<unknown>,
      /readDataset\(\) option `onProgress` must be a function, not 1/,
    ],
    [
      'readDataset() whose onProgress throws',
      () =>
        api.readDataset(api.SAMPLE_DATASET, {
          onProgress: () => {
            throw new Error('progress failed');
          },
        }),
      /readDataset\(\)'s `onProgress` callback threw: progress failed/,
    ],
    [
      'readManifest() of a number',
      () => loose(api.readManifest)(5) as Promise<unknown>,
      /readManifest\(\)'s argument `siteDir` must be a string, not 5/,
    ],
  ])('%s', async (_, call, message) => {
    const error = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CitiesApiError);
    expect((error as Error).message).toMatch(message);
  });
});

describe('build(), serve() and runMain() of options JavaScript may pass: a CitiesApiError naming what is wrong', () => {
  const failingGetter = {
    get data() {
      throw new Error('getter failed');
    },
  };
  const failingKeys = new Proxy(
    {},
    {
      ownKeys() {
        throw new Error('keys failed');
      },
    },
  );
  it.each<[string, () => Promise<unknown>, RegExp]>([
    [
      'build() of options whose getter throws',
      () => api.build(failingGetter as never),
      /^build\(\) could not read its options: getter failed$/,
    ],
    [
      'build() of a Proxy whose keys throw',
      () => api.build(failingKeys as never),
      /^build\(\) could not read its options: keys failed$/,
    ],
    [
      'serve() of options whose getter throws',
      () => api.serve(failingGetter as never),
      /^serve\(\) could not read its options: getter failed$/,
    ],
    [
      'runMain() of nothing',
      () => loose(api.runMain)() as Promise<unknown>,
      /^runMain\(\) takes an object of options \(see its type, RunOptions\), not nothing$/,
    ],
    ['runMain() without rawArgs', () => loose(api.runMain)({}) as Promise<unknown>, /runMain\(\) needs `rawArgs`/],
    [
      'runMain() of rawArgs a string',
      () => api.runMain({ rawArgs: 'build' as never }),
      /option `rawArgs` must be an array of strings/,
    ],
    [
      'runMain() with stderr not a stream',
      () => api.runMain({ rawArgs: [], stderr: {} as never }),
      /option `stderr` must be a Writable stream/,
    ],
  ])('%s', async (_, call, message) => {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect((error as Error).message).toMatch(message);
  });
});

describe('an export called rightly: answered as before the checks', () => {
  it.each<[string, () => unknown, unknown]>([
    [
      'a table readDataset() made is a CityTable',
      async () => (await api.readDataset(api.SAMPLE_DATASET)) instanceof api.CityTable,
      true,
    ],
    ['CityTable.fromCities() of valid cities', () => api.CityTable.fromCities([makeCity(1), makeCity(2)]).count, 2],
    [
      "CityTable.fromDatasetFile() leaves the caller's bytes as they were (the core moves a file's lines in place)",
      () => {
        const file = new TextEncoder().encode('[\n{"id":1,"top":true},\n{"id":2,"top":false}\n]\n');
        const before = file.slice();
        const table = api.CityTable.fromDatasetFile(file);
        return [table.count, Buffer.from(file).equals(before)];
      },
      [2, true],
    ],
    ['answerListing() of an empty index', () => api.answerListing(index, [], 'https://example.org').status, 200],
    [
      'paginate() of a BigInt page size',
      () => api.paginate(48, 10n ** 30n, undefined),
      { number: 1, pages: 1, start: 0, end: 48 },
    ],
    ['paginate() of the last page', () => api.paginate(48, 10, 'last'), { number: 5, pages: 5, start: 40, end: 48 }],
    ['pageSizeFrom() of nothing', () => api.pageSizeFrom(undefined), 10n],
    ['parseOrdering() of nothing', () => api.parseOrdering(undefined), []],
    [
      'orderingKey() of parseOrdering()',
      () => api.orderingKey(api.parseOrdering('name_en, -name_ar')),
      'name_en,-name_ar',
    ],
    [
      'staticPathFor() of page 2',
      () => api.staticPathFor(api.parseQuery('page=2'), spec),
      'cities/default/default/2.json',
    ],
    [
      "parseQuery() as Array#map's callback (given an index and the array after the query)",
      () => ['page=2', 'ordering=name_en&page=3'].map(api.parseQuery),
      [
        [['page', '2']],
        [
          ['ordering', 'name_en'],
          ['page', '3'],
        ],
      ],
    ],
    [
      'parseQuery() given numbers after the query: the whole query read all the same',
      () => loose(api.parseQuery)('page=2&page_size=5', 7, 3),
      [
        ['page', '2'],
        ['page_size', '5'],
      ],
    ],
    ['specOf() of a manifest', () => api.specOf(manifest).count, spec.count],
    [
      'listingUrl() of a query',
      () => api.listingUrl('https://example.org', 'page=2'),
      'https://example.org/cities/?page=2',
    ],
    ['formatProblem() of a reason only', () => api.formatProblem({ reason: 'bad' }), 'bad'],
  ])('%s', async (_, call, expected) => {
    expect(await call()).toEqual(expected);
  });
});
