import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LambdaEvent, LambdaResult } from '../src/http/platforms/lambda.js';
import { KIT_DATASETS, expectWholeKit, tempDir } from './helpers.js';
import { kitEdgeProject } from './edge-helpers.js';
import { requireTool } from './tool-check.js';

// `cities-api edge lambda`: the function as AWS runs it, loaded from the generated function.zip
// (unpacked by Python's zipfile, an independent reader), driven with payload-2.0 events made from
// each kit request the way a function URL makes them; its results turned back into HTTP answers
// are replayed by the kit's runner: 400/400.

const PYTHON = '/usr/bin/python3';
const available = requireTool('python3 (to unpack the zip)', PYTHON, 'apt-get install -y python3');

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-edge-lambda-')));
afterAll(() => cleanup());

type Handler = (event: LambdaEvent) => Promise<LambdaResult>;

/** The payload-2.0 event a function URL makes of an HTTP request. */
async function eventOf(req: IncomingMessage): Promise<LambdaEvent> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const target = req.url!;
  const q = target.indexOf('?');
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    headers[name] = name in headers ? `${headers[name]},${req.rawHeaders[i + 1]}` : req.rawHeaders[i + 1]!;
  }
  const body = Buffer.concat(chunks);
  return {
    rawPath: q < 0 ? target : target.slice(0, q),
    rawQueryString: q < 0 ? '' : target.slice(q + 1),
    headers,
    requestContext: { http: { method: req.method! }, domainName: 'abc.lambda-url.us-east-1.on.aws' },
    ...(body.length ? { body: body.toString('base64'), isBase64Encoded: true } : {}),
  };
}

/** A function URL in front of the handler: each request an event, each result an answer. */
async function functionUrl(handler: Handler): Promise<{ url: string; server: Server; events: number }> {
  const state = { events: 0 };
  const server = createServer((req, res) => {
    void eventOf(req).then(async (event) => {
      state.events++;
      const result = await handler(event);
      const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body);
      res.writeHead(result.statusCode, result.headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, get events() { return state.events; } };
}

const totals = { passed: 0, failed: 0, events: 0 };

describe.skipIf(!available).each(KIT_DATASETS)('kit dataset $name through the Lambda handler', ({ name, baseUrl, prefix }) => {
  it('every kit answer matches, driven by payload-2.0 events', async () => {
    const { project } = await kitEdgeProject(root, name, baseUrl, 'lambda');
    const unpacked = join(project.out, 'unpacked');
    await promisify(execFile)(PYTHON, ['-c', 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; z.extractall(sys.argv[2])', join(project.out, 'function.zip'), unpacked]);
    for (const file of ['cities-api-edge.js', 'cities-site.js', 'index.mjs']) expect(await readFile(join(unpacked, file)), file).toEqual(await readFile(join(project.out, file)));
    const { handler } = (await import(pathToFileURL(join(unpacked, 'index.mjs')).href)) as { handler: Handler };
    const front = await functionUrl(handler);
    try {
      await expectWholeKit(front.url, name, prefix, totals);
      totals.events += front.events;
    } finally {
      front.server.close();
    }
  }, 120_000);
});

describe('the Lambda result', () => {
  it.each([
    ['a page: base64 of the exact bytes, the API headers', 'GET', '/cities/?page_size=3', 200],
    ['HEAD: the length of the GET, an empty body', 'HEAD', '/cities/', 200],
    ['POST: the read-only 403', 'POST', '/cities/', 403],
    ['a page file\'s path, as CloudFront\'s failover from S3 asks it', 'GET', '/cities/name_en/default/2.json', 200],
  ])('%s', async (_, method, target, status) => {
    const { project } = await kitEdgeProject(root, 'cities11', 'http://api.example.com', 'lambda', `result-${method}`);
    const { handler } = (await import(pathToFileURL(join(project.out, 'index.mjs')).href)) as { handler: Handler };
    const [rawPath, rawQueryString = ''] = target.split('?') as [string, string?];
    const result = await handler({ rawPath, rawQueryString, headers: { 'content-type': 'application/json' }, requestContext: { http: { method } }, ...(method === 'POST' ? { body: 'e30=', isBase64Encoded: true } : {}) });
    expect(result).toMatchObject({ statusCode: status, isBase64Encoded: true, headers: { 'content-type': 'application/json', vary: 'Accept' } });
    const bytes = Buffer.from(result.body, 'base64');
    expect(bytes.length).toBe(method === 'HEAD' ? 0 : Number(result.headers['content-length']));
  });
});

describe('an answer over Lambda\'s 6 MB response limit', () => {
  it('is a clear 500 saying what to ask instead, not Lambda\'s wordless 502', async () => {
    const { lambdaHandler, LAMBDA_BODY_BYTES } = await import('../src/http/platforms/lambda.js');
    const { CityTable } = await import('../src/core/city-table.js');
    const { makeCity, testSpec } = await import('./helpers.js');
    const cities = Array.from({ length: 9000 }, (_, i) => makeCity(i + 1, { name: `City ${'x'.repeat(40)} ${i}` }));
    const dataset = Buffer.concat([...CityTable.fromCities(cities).datasetParts()]).toString();
    const handler = lambdaHandler({ settings: testSpec({ count: cities.length }), dataset });
    const event = (size: number) => ({ rawPath: '/cities/', rawQueryString: `page_size=${size}`, requestContext: { http: { method: 'GET' } } });
    const small = await handler(event(100));
    expect(small.statusCode).toBe(200);
    const big = await handler(event(9000));
    expect(Buffer.byteLength(JSON.stringify(cities))).toBeGreaterThan(LAMBDA_BODY_BYTES);
    expect([big.statusCode, JSON.parse(Buffer.from(big.body, 'base64').toString())]).toEqual([500, { detail: expect.stringMatching(/^This answer \(\d+ bytes\) exceeds AWS Lambda's 6 MB response limit/) }]);
  });
});

afterAll(() => {
  if (available) console.log(`conformance through the Lambda handler: ${totals.passed} of ${totals.passed + totals.failed} answers match (${totals.events} payload-2.0 events)`);
});
