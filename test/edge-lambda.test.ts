import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { City } from '../src/core/fields.js';
import { ROUTES } from '../src/core/route-table.js';
import {
  lambdaHandler,
  LAMBDA_BODY_BYTES,
  type LambdaEvent,
  type LambdaResult,
} from '../src/platforms/lambda/adapter.js';
import { blockPath, LAYOUTS, rankPath } from '../src/site/edge-files.js';
import { blocksOf, parseIndex } from '../src/site/edge-index.js';
import { DOT_SEGMENT_TARGETS, KIT_DATASETS, expectWholeKit, makeCity, tempDir, testSpec } from './helpers.js';
import { kitLambdaProject, memoryEdgeSite } from './edge-helpers.js';
import { functionUrl, PYTHON, unpack } from './lambda-front.js';
import { requireTool } from './tool-check.js';

// `cities-api edge lambda`: the function as AWS runs it, loaded from the generated function.zip
// (unpacked by Python's zipfile, an independent reader), driven with payload-2.0 events made from
// each kit request the way a function URL makes them; its results turned back into HTTP answers
// are replayed by the kit's runner: 400/400.

const available = requireTool('python3 (to unpack the zip)', PYTHON, 'apt-get install -y python3');

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-edge-lambda-')));
afterAll(() => cleanup());

type Handler = (event: LambdaEvent) => Promise<LambdaResult>;

const handlerOf = async (dir: string) =>
  (await import(pathToFileURL(join(dir, 'index.mjs')).href)) as { handler: Handler };

const lambdaProject = (name: string, baseUrl: string, dir: string) => kitLambdaProject(root, name, baseUrl, dir);

/** cities11's function, from its own function.zip, made once for the cases below that only send it requests. */
let small: Promise<{ site: string; handler: Handler }> | undefined;
const smallFunction = () =>
  (small ??= (async () => {
    const { site, project } = await lambdaProject('cities11', 'http://api.example.com', 'cities11-function');
    return { site, handler: (await handlerOf(await unpack(project.out))).handler };
  })());

const totals = { passed: 0, failed: 0, events: 0 };

describe.skipIf(!available).each(KIT_DATASETS)(
  'kit dataset $name through the Lambda handler',
  ({ name, baseUrl, prefix }) => {
    it('every kit answer matches, driven by payload-2.0 events', async () => {
      const { project, site } = await lambdaProject(name, baseUrl, name);
      const unpacked = await unpack(project.out);
      for (const file of ['cities-api-edge.js', 'cities-site.js', 'index.mjs'])
        expect(await readFile(join(unpacked, file)), file).toEqual(await readFile(join(project.out, file)));
      // The edge index, every rank file and the default ordering's layout ride in the zip at their site paths (the
      // function reads them there), the site's own bytes; no other layout, and nothing else of the site.
      const index = parseIndex(await readFile(join(site, ROUTES.edge.index)));
      const { starts, path } = blocksOf(index, ROUTES.absent);
      const packaged = [ROUTES.edge.index, ...LAYOUTS.map(rankPath), ...starts.map((_, b) => path(b))].sort();
      const zipped = (await readdir(join(unpacked, ROUTES.edge.dir), { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile())
        .map((e) => relative(unpacked, join(e.parentPath, e.name)));
      expect(zipped.sort()).toEqual(packaged);
      for (const file of packaged)
        expect((await readFile(join(unpacked, file))).equals(await readFile(join(site, file))), file).toBe(true);
      expect((await readdir(join(unpacked, ROUTES.file.meta))).sort()).toEqual(['edge']);
      const { handler } = await handlerOf(unpacked);
      const front = await functionUrl(handler);
      try {
        await expectWholeKit(front.url, name, prefix, totals);
        totals.events += front.events;
      } finally {
        front.server.close();
      }
    }, 120_000);
  },
);

describe('the Lambda result', () => {
  it.each([
    ['a page: base64 of the exact bytes, the API headers', 'GET', '/cities/?page_size=3', 200],
    ['HEAD: the length of the GET, an empty body', 'HEAD', '/cities/', 200],
    ['POST: the read-only 403', 'POST', '/cities/', 403],
    ["a page file's path, as CloudFront's failover from S3 asks it", 'GET', '/cities/name_en/default/2.json', 200],
  ])('%s', async (_, method, target, status) => {
    const { handler } = await smallFunction();
    const [rawPath, rawQueryString = ''] = target.split('?') as [string, string?];
    const result = await handler({
      rawPath,
      rawQueryString,
      headers: { 'content-type': 'application/json' },
      requestContext: { http: { method } },
      ...(method === 'POST' ? { body: 'e30=', isBase64Encoded: true } : {}),
    });
    expect(result).toMatchObject({
      statusCode: status,
      isBase64Encoded: true,
      headers: { 'content-type': 'application/json', vary: 'Accept' },
    });
    const bytes = Buffer.from(result.body, 'base64');
    expect(bytes.length).toBe(method === 'HEAD' ? 0 : Number(result.headers['content-length']));
  });
});

// The event's raw path, not the Request's URL made of it (which resolves dot segments): the reference's 404.
describe('a raw path with dot segments or a double slash: 404, as the reference', () => {
  it.each(DOT_SEGMENT_TARGETS)('%s', async (target) => {
    const { handler } = await smallFunction();
    const [rawPath, rawQueryString = ''] = target.split('?') as [string, string?];
    const result = await handler({ rawPath, rawQueryString, requestContext: { http: { method: 'GET' } } });
    expect(result.statusCode).toBe(404);
  });
});

describe('/openapi.json from the zip, as the static hosts answer it', () => {
  it.each([['GET'], ['HEAD']])('%s', async (method) => {
    const { site, handler } = await smallFunction();
    const result = await handler({ rawPath: '/openapi.json', requestContext: { http: { method } } });
    const file = await readFile(join(site, 'openapi.json'));
    expect(result).toMatchObject({
      statusCode: 200,
      headers: { 'content-type': 'application/json', 'content-length': String(file.length) },
    });
    expect(Buffer.from(result.body, 'base64')).toEqual(method === 'HEAD' ? Buffer.alloc(0) : file);
  });
});

describe("answers over Lambda's 6 MB response limit", () => {
  const event = (size: number) => ({
    rawPath: '/cities/',
    rawQueryString: `page_size=${size}`,
    requestContext: { http: { method: 'GET' } },
  });
  const detailOf = (result: LambdaResult) => [
    result.statusCode,
    JSON.parse(Buffer.from(result.body, 'base64').toString()) as unknown,
  ];
  const handlerFor = (cities: readonly City[]) => {
    const { read } = memoryEdgeSite(new CityIndex(CityTable.fromCities(cities), 'codepoint'));
    return lambdaHandler({ settings: testSpec({ count: cities.length }) }, read);
  };

  it.each([
    [
      'a page of more cities than the cap: a clear 500 before any chunk is read',
      9000,
      5001,
      /^a page of 5001 cities is more than the 5000 an edge function answers; ask for a smaller page_size$/,
    ],
    [
      "a page under the cap whose bytes are over the limit (cities of unusual size): a clear 500, not Lambda's wordless 502",
      5000,
      5000,
      /^This answer \(\d+ bytes\) exceeds AWS Lambda's 6 MB response limit: ask for a smaller page_size\.$/,
    ],
  ])('%s', async (_, count, size, detail) => {
    const cities = Array.from({ length: count }, (_, i) =>
      makeCity(i + 1, { name: `City ${'x'.repeat(size === 5000 ? 120 : 4)} ${i}` }),
    );
    const handler = handlerFor(cities);
    expect((await handler(event(100))).statusCode).toBe(200);
    if (size === 5000) expect(Buffer.byteLength(JSON.stringify(cities))).toBeGreaterThan(LAMBDA_BODY_BYTES);
    expect(detailOf(await handler(event(size)))).toEqual([500, { detail: expect.stringMatching(detail) }]);
  });

  it.each([
    ['no domainName and a Host header that is no host', { host: 'a@b' }, undefined],
    ['no domainName and a Host header with a path', { host: 'x/../y' }, undefined],
    ['a domainName that is no host', {}, 'a@b'],
  ])('%s: answered from the path and query, never from the Host header', async (_, headers, domainName) => {
    const cities = Array.from({ length: 30 }, (_, i) => makeCity(i + 1));
    const { read } = memoryEdgeSite(new CityIndex(CityTable.fromCities(cities), 'codepoint'));
    const handler = lambdaHandler({ settings: testSpec({ count: cities.length }) }, read);
    const result = await handler({
      rawPath: '/cities/',
      rawQueryString: 'page_size=3',
      headers,
      requestContext: { http: { method: 'GET' }, ...(domainName ? { domainName } : {}) },
    });
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(Buffer.from(result.body, 'base64').toString()).results).toHaveLength(3);
  });

  it('an edge file missing from the zip: a clear 500 naming it, and the next request tries again', async () => {
    const cities = Array.from({ length: 600 }, (_, i) => makeCity(i + 1));
    const { files, read } = memoryEdgeSite(new CityIndex(CityTable.fromCities(cities), 'codepoint'));
    const block = files.get(blockPath('name_ar', 1))!;
    files.delete(blockPath('name_ar', 1));
    const handler = lambdaHandler({ settings: testSpec({ count: cities.length }) }, read);
    const deep = { ...event(100), rawQueryString: 'page_size=100&page=6' };
    expect(detailOf(await handler(deep))).toEqual([
      500,
      {
        detail: `the edge file ${blockPath('name_ar', 1)} could not be read (no file ${blockPath('name_ar', 1)}): deploy the site's ${ROUTES.edge.dir}/ files (from the same build) with the function`,
      },
    ]);
    files.set(blockPath('name_ar', 1), block);
    expect((await handler(deep)).statusCode).toBe(200);
  });
});

afterAll(() => {
  if (available)
    console.log(
      `conformance through the Lambda handler: ${totals.passed} of ${totals.passed + totals.failed} answers match (${totals.events} payload-2.0 events)`,
    );
});
