import type { Server } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import {
  LAMBDA_STREAM_PAGE_CITIES,
  lambdaStreamingHandler,
  type AwsLambdaRuntime,
} from '../src/platforms/lambda/streaming.js';
import { kitLambdaProject, memoryEdgeSite } from './edge-helpers.js';
import { makeCity, tempDir, testSpec } from './helpers.js';
import { startCli } from './serve-helpers.js';
import { PYTHON, STAND_IN, streamingFunctionUrl, unpack, type StreamHandler } from './lambda-front.js';
import { requireTool } from './tool-check.js';

// The Lambda handler for function URLs in RESPONSE_STREAM mode, loaded from the generated
// function.zip (unpacked by Python's zipfile) as AWS loads it, its answers compared byte for byte
// with `cities-api serve` on the same site. AWS's runtime is not here: `awslambda` is a stand-in
// (lambda-front.ts says to which contract).

const available = requireTool('python3 (to unpack the zip)', PYTHON, 'apt-get install -y python3');

let root: string;
let cleanup: () => Promise<void>;
let lambda: { url: string; server: Server };
let serve: { url: string; stop: () => Promise<void> };

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-edge-lambda-stream-'));
  if (!available) return;
  const { site, project } = await kitLambdaProject(root, 'cities1234', 'http://api.example.com', 'lambda');
  const unpacked = await unpack(project.out);
  // The global is there before the entry is loaded, as in Lambda's runtime.
  (globalThis as { awslambda?: AwsLambdaRuntime }).awslambda = STAND_IN;
  const entry = (await import(pathToFileURL(join(unpacked, 'index.mjs')).href)) as { streamingHandler: StreamHandler };
  lambda = await streamingFunctionUrl(entry.streamingHandler);
  serve = await startCli([site, '--port', '0', '--quiet', '--no-preview-pages']);
}, 300_000);
afterAll(async () => {
  delete (globalThis as { awslambda?: AwsLambdaRuntime }).awslambda;
  lambda?.server.close();
  await serve?.stop();
  await cleanup();
});

const ask = async (base: string, method: string, query: string, accept: string) => {
  const response = await fetch(`${base}/cities/?${query}`, { method, headers: { accept } });
  const body = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    etag: response.headers.get('etag'),
    type: response.headers.get('content-type'),
    body,
  };
};

describe.skipIf(!available)("index.streamingHandler from function.zip: serve's answers, streamed", () => {
  it.each([
    ['an uncovered page', 'GET', 'page_size=7&page=3', '*/*', true],
    ['a multi-field ordering', 'GET', 'ordering=name_en,-name_ar&page=4', '*/*', true],
    ['page_size ≥ count: every city, multi-field', 'GET', 'ordering=-name_en,name_ar&page_size=5000', '*/*', true],
    ['page_size ≥ count: every city, default order (a file for serve)', 'GET', 'page_size=5000', '*/*', false],
    ['a page a file covers for serve', 'GET', 'ordering=-name_ar&page=2', '*/*', false],
    ['indented JSON', 'GET', 'page_size=3', 'application/json; indent=4', true],
    ['the browsable page', 'GET', 'page_size=3&format=api', '*/*', false],
    ['an invalid page', 'GET', 'page=999', '*/*', false],
    ['HEAD', 'HEAD', 'page_size=7&page=3', '*/*', true],
  ])('%s', async (_, method, query, accept, sameETag) => {
    const [got, want] = await Promise.all([
      ask(lambda.url, method, query, accept),
      ask(serve.url, method, query, accept),
    ]);
    expect({ status: got.status, type: got.type, length: got.body.length }).toEqual({
      status: want.status,
      type: want.type,
      length: want.body.length,
    });
    expect(got.body.equals(want.body)).toBe(true);
    if (sameETag) expect(got.etag).toBe(want.etag);
  });
});

describe("a streamed page's limit (200 MB, AWS's documented streaming limit)", () => {
  const big = (count: number, name: (i: number) => string) => {
    const cities = Array.from({ length: count }, (_, i) => makeCity(i + 1, { name: name(i) }));
    const { read } = memoryEdgeSite(new CityIndex(CityTable.fromCities(cities), 'codepoint'));
    const handler = lambdaStreamingHandler(
      { settings: testSpec({ count }) },
      read,
      undefined,
      STAND_IN,
    ) as StreamHandler;
    return streamingFunctionUrl(handler);
  };

  // The cap counts cities, not bytes: the capped site's cities share one short name (its 150,001 cities, their table
  // and edge files took 7.6 CPU-s to make so, 12.3 with a name of its own for each, measured in one process).
  it.each<[string, number, (i: number) => string, number]>([
    [
      'a page over 6 MB (the buffered limit), under the cap: streamed whole',
      16_000,
      (i) => `${'x'.repeat(30)} ${i}`,
      200,
    ],
    ['a page of more cities than the cap: a clear 500 naming the limit', LAMBDA_STREAM_PAGE_CITIES + 1, () => 'x', 500],
  ])(
    '%s',
    async (_, count, name, status) => {
      const front = await big(count, name);
      try {
        const got = await ask(front.url, 'GET', `page_size=${count}`, '*/*');
        expect(got.status).toBe(status);
        if (status === 200) {
          expect(got.body.length).toBeGreaterThan(6 * 1024 * 1024);
          expect((JSON.parse(got.body.toString()) as { results: unknown[] }).results).toHaveLength(count);
        } else
          expect(JSON.parse(got.body.toString())).toEqual({
            detail: `a page of ${count} cities is more than the ${LAMBDA_STREAM_PAGE_CITIES} a streamed AWS Lambda response holds (its limit: 200 MB); ask for a smaller page_size`,
          });
      } finally {
        front.server.close();
      }
    },
    120_000,
  );
});
