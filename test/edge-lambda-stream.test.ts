import { execFile } from 'node:child_process';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { LambdaEvent } from '../src/platforms/lambda/adapter.js';
import {
  LAMBDA_STREAM_PAGE_CITIES,
  lambdaStreamingHandler,
  type AwsLambdaRuntime,
  type LambdaResponseStream,
} from '../src/platforms/lambda/streaming.js';
import { kitEdgeProject, memoryEdgeSite } from './edge-helpers.js';
import { makeCity, tempDir, testSpec } from './helpers.js';
import { startCli } from './serve-helpers.js';
import { requireTool } from './tool-check.js';

// The Lambda handler for function URLs in RESPONSE_STREAM mode, loaded from the generated
// function.zip (unpacked by Python's zipfile) as AWS loads it, its answers compared byte for byte
// with `cities-api serve` on the same site. AWS's runtime is not here: `awslambda` is a STAND-IN,
// written to the contract of the Node.js runtime interface client (streamifyResponse marks the
// handler, which is called with the event and a Writable; HttpResponseStream.from writes the
// prelude, the JSON of status and headers then 8 NUL bytes, before the body), and the function URL
// in front is a node:http server that reads that prelude into the status line and headers and
// passes the body on as it is written, with backpressure.

const PYTHON = '/usr/bin/python3';
const available = requireTool('python3 (to unpack the zip)', PYTHON, 'apt-get install -y python3');

const DELIMITER = Buffer.alloc(8);

/** The stand-in for Lambda's `awslambda` global (see above). */
const STAND_IN: AwsLambdaRuntime = {
  streamifyResponse: (handler) =>
    Object.assign(handler, { [Symbol.for('aws.lambda.runtime.handler.streaming')]: 'response' }),
  HttpResponseStream: {
    from(stream, prelude) {
      stream.write(Buffer.from(JSON.stringify(prelude)));
      stream.write(DELIMITER);
      return stream;
    },
  },
};

type StreamHandler = (event: LambdaEvent, stream: LambdaResponseStream) => Promise<void>;

/** The response stream a function URL gives the handler: the prelude becomes `res`'s head, the rest its body. */
function responseStreamFor(res: ServerResponse): Writable {
  let head: Buffer | null = Buffer.alloc(0);
  return new Writable({
    write(chunk: Buffer, _, done) {
      if (head) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf(DELIMITER);
        if (end < 0) return done();
        const { statusCode, headers } = JSON.parse(head.subarray(0, end).toString()) as {
          statusCode: number;
          headers: Record<string, string>;
        };
        const rest = head.subarray(end + DELIMITER.length);
        head = null;
        res.writeHead(statusCode, headers);
        chunk = rest;
      }
      if (res.req.method === 'HEAD' || chunk.length === 0 || res.write(chunk)) return done();
      res.once('drain', () => done());
    },
    final(done) {
      res.end();
      done();
    },
  });
}

async function functionUrl(handler: StreamHandler): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const target = req.url!;
    const q = target.indexOf('?');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const event: LambdaEvent = {
      rawPath: q < 0 ? target : target.slice(0, q),
      rawQueryString: q < 0 ? '' : target.slice(q + 1),
      headers,
      requestContext: { http: { method: req.method! }, domainName: 'abc.lambda-url.us-east-1.on.aws' },
    };
    handler(event, responseStreamFor(res) as unknown as LambdaResponseStream).catch((error: unknown) =>
      res.destroy(error as Error),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let root: string;
let cleanup: () => Promise<void>;
let lambda: { url: string; server: Server };
let serve: { url: string; stop: () => Promise<void> };

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-edge-lambda-stream-'));
  if (!available) return;
  const { site, project } = await kitEdgeProject(root, 'cities1234', 'http://api.example.com', 'lambda');
  const unpacked = join(project.out, 'unpacked');
  await promisify(execFile)(PYTHON, [
    '-c',
    'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; z.extractall(sys.argv[2])',
    join(project.out, 'function.zip'),
    unpacked,
  ]);
  // The global is there before the entry is loaded, as in Lambda's runtime.
  (globalThis as { awslambda?: AwsLambdaRuntime }).awslambda = STAND_IN;
  const entry = (await import(pathToFileURL(join(unpacked, 'index.mjs')).href)) as { streamingHandler: StreamHandler };
  lambda = await functionUrl(entry.streamingHandler);
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
  const big = (count: number, nameBytes: number) => {
    const cities = Array.from({ length: count }, (_, i) => makeCity(i + 1, { name: `${'x'.repeat(nameBytes)} ${i}` }));
    const { read } = memoryEdgeSite(new CityIndex(CityTable.fromCities(cities), 'codepoint'));
    const handler = lambdaStreamingHandler({ settings: testSpec({ count }) }, read, STAND_IN) as StreamHandler;
    return functionUrl(handler);
  };

  it.each([
    ['a page over 6 MB (the buffered limit), under the cap: streamed whole', 16_000, 30, 200],
    ['a page of more cities than the cap: a clear 500 naming the limit', LAMBDA_STREAM_PAGE_CITIES + 1, 4, 500],
  ])(
    '%s',
    async (_, count, nameBytes, status) => {
      const front = await big(count, nameBytes);
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
