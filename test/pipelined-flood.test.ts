import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { serve } from '../src/app/serve.js';
import { DEFAULT_LIMITS } from '../src/http/limits.js';
import { makeCity, tempDir } from './helpers.js';
import { pipelined, type PipelinedAnswer, type PipelinedClient } from './pipelined-client.js';
import { rawRequest, startCli } from './serve-helpers.js';
import { testTimeLeft } from './started-process.js';

// A client pipelining thousands of requests on one connection, reading nothing, or slowly, or
// resetting: node:http parses what arrives, and each request parsed is a request and a response
// held until answered (#26: a flood grew serve by 479 MB in 10 s at 140k cities). serve reads a
// connection no further while maxPipelinedRequests of its requests wait (http/pipeline-cap.ts):
// the rest wait in the kernel (TCP flow control). What serve's node:http parsed is read from
// node's own diagnostics channels by a module preloaded into each serve process
// (parsed-requests.cjs): no hook in serve.

/** Requests of about 500 bytes (a padding header): one of node's 64 KiB reads holds 130 of them. */
const PADDING = `X-Padding: ${'p'.repeat(470)}\r\n`;
const FLOOD = 4000;
/** Small answers (4-5 KB: precomputed and computed pages, the preview's index, a 404): one the kernel refuses does not fill node's socket buffer, so node reads on. */
const SMALL = [
  ...Array.from({ length: 8 }, (_, i) => `/cities/?page=${i + 1}`),
  ...Array.from({ length: 8 }, (_, i) => `/cities/?page_size=9&page=${i + 1}`),
  '/',
  '/nope/',
];
/** With large answers among them (the OpenAPI document, a 40 KB page): node pauses a socket that must drain itself, and resumes it once drained. */
const MIXED = [...SMALL, '/openapi.json', '/cities/?page_size=90&page=2'];
/** What a connection may have parsed and unanswered: the cap, then the rest of the read that reached it (and a request it cut). */
const BOUND =
  DEFAULT_LIMITS.maxPipelinedRequests +
  Math.ceil(65536 / Math.min(...MIXED.map((t) => `GET ${t} HTTP/1.1\r\nHost: x\r\n${PADDING}\r\n`.length))) +
  1;

let dir: string;
let cleanup: () => Promise<void>;
let site: string;
const preload = join(import.meta.dirname, 'parsed-requests.cjs');

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('cities-pipelined-flood-'));
  await writeFile(join(dir, 'cities.json'), JSON.stringify(Array.from({ length: 200 }, (_, i) => makeCity(i + 1))));
  site = join(dir, 'site');
  await build({
    data: join(dir, 'cities.json'),
    out: site,
    baseUrl: 'http://x',
    collation: 'codepoint',
    orderings: ['default'],
    pageSizes: [10],
    compression: 'none',
  });
});
afterAll(async () => cleanup?.());

interface Parsed {
  parsed: number;
  peak: number;
  open: number;
}

/** What each serve process wrote (parsed-requests.cjs), summed; the peak is the largest of one connection. */
async function parsedSoFar(counts: string): Promise<Parsed> {
  const all: Parsed = { parsed: 0, peak: 0, open: 0 };
  for (const file of await readdir(counts)) {
    let one: Parsed;
    try {
      one = JSON.parse(await readFile(join(counts, file), 'utf8')) as Parsed;
    } catch {
      return parsedSoFar(counts); // caught mid-write: read again
    }
    all.parsed += one.parsed;
    all.peak = Math.max(all.peak, one.peak);
    all.open += one.open;
  }
  return all;
}

/** Once `done` holds of the counts (asked every 50 ms), or the test's time is nearly out: the counts then. */
async function countsWhen(counts: string, done: (now: Parsed, before: Parsed) => boolean): Promise<Parsed> {
  const end = Date.now() + testTimeLeft();
  let before = await parsedSoFar(counts);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = await parsedSoFar(counts);
    if (done(now, before) || Date.now() > end) return now;
    before = now;
  }
}

/** Until no request was parsed for 500 ms: node reads no more of the connection. */
async function parsingStopped(counts: string): Promise<Parsed> {
  let still = Date.now();
  return countsWhen(counts, (now, before) => {
    if (now.parsed !== before.parsed) still = Date.now();
    return Date.now() - still >= 500;
  });
}

/** Reads with pauses: 5 ms of reading every 25 ms. */
function readSlowly(client: PipelinedClient): Promise<PipelinedAnswer[]> {
  const reading = client.read();
  const throttle = setInterval(() => {
    client.socket.pause();
    setTimeout(() => client.socket.resume(), 20);
  }, 25);
  return reading.finally(() => clearInterval(throttle));
}

describe.each([1, 2])('serve --workers %d, a client pipelining thousands of requests', (workers) => {
  it.each([
    ['reads nothing, then reads: every answer, in order, byte-exact', SMALL, 'read'],
    ['reads slowly from the start, large answers among them: every answer, in order', MIXED, 'slowly'],
    ['resets mid-flood: the connection is let go, others answered', SMALL, 'reset'],
  ] as const)(
    '%s; a connection never has more than the cap and one read parsed, unanswered',
    async (_, targets, then) => {
      const counts = join(dir, `counts-${workers}-${then}`);
      await mkdir(counts);
      const server = await startCli(['--site', site, '--port', '0', '--quiet', '--workers', String(workers)], {
        NODE_OPTIONS: `--require ${preload}`,
        PARSED_REQUESTS_DIR: counts,
      });
      try {
        const expected = new Map<string, Buffer>();
        for (const target of targets)
          expected.set(target, (await rawRequest(`${server.url}${target}`, { fresh: true })).body);
        const port = Number(new URL(server.url).port);
        const requests = Array.from({ length: FLOOD }, (_, i) => ({
          target: targets[i % targets.length]!,
          headers: PADDING,
        }));
        const client = pipelined(port, requests);
        if (then === 'slowly') {
          const answers = await readSlowly(client);
          expect(answers.length).toBe(FLOOD);
          expect(answers.every((a, i) => a.body.equals(expected.get(requests[i]!.target)!))).toBe(true);
          expect((await parsedSoFar(counts)).peak).toBeLessThanOrEqual(BOUND);
          return;
        }
        const flooded = await parsingStopped(counts);
        expect(flooded.peak).toBeLessThanOrEqual(BOUND);
        expect(flooded.parsed).toBeLessThan(targets.length + FLOOD);
        if (then === 'read') {
          const answers = await client.read();
          expect(answers.map((a) => a.status)).toEqual(requests.map((r) => (r.target === '/nope/' ? 404 : 200)));
          const wrong = answers.findIndex((a, i) => !a.body.equals(expected.get(requests[i]!.target)!));
          expect(wrong, `answer ${wrong} (${requests[wrong]?.target})`).toBe(-1);
          const all = await countsWhen(counts, (now) => now.parsed === targets.length + FLOOD);
          expect(all.parsed).toBe(targets.length + FLOOD);
          expect(all.peak).toBeLessThanOrEqual(BOUND);
        } else {
          client.reset();
          expect(await countsWhen(counts, (now) => now.open === 0)).toMatchObject({ open: 0 });
          expect((await rawRequest(`${server.url}${targets[0]}`, { fresh: true })).body).toEqual(
            expected.get(targets[0]!),
          );
        }
      } finally {
        await server.stop();
      }
    },
    120_000,
  );
});

// node's request timeouts run while a connection's reading is held: the request a held read cut in
// two (its rest waiting in the kernel) timed out, and its 408 closed the connection with every answer
// unread. Short limits here (the defaults are 10 and 30 s); the client waits four headers timeouts.
describe('a client that waits past the request timeouts before reading', () => {
  const limits = { headersTimeout: 300, requestTimeout: 600 };
  const wait = 4 * limits.headersTimeout;
  it.each([
    ['its requests whole: every answer', ''],
    ['and a last request cut short: every answer, then a 408 once reading resumed', 'GET /cities/ HTTP/1.1\r\nHost'],
  ])(
    '%s',
    async (_, tail) => {
      const server = await serve({ dir: site, port: 0, limits });
      try {
        const expected = new Map<string, Buffer>();
        for (const target of SMALL)
          expected.set(target, (await rawRequest(`${server.url}${target}`, { fresh: true })).body);
        const requests = Array.from({ length: FLOOD }, (_, i) => ({
          target: SMALL[i % SMALL.length]!,
          headers: PADDING,
        }));
        const client = pipelined(Number(new URL(server.url).port), requests, false, tail);
        await new Promise((resolve) => setTimeout(resolve, wait));
        const answers = await client.read();
        const statuses = requests.map((r) => (r.target === '/nope/' ? 404 : 200));
        expect(answers.map((a) => a.status)).toEqual(tail ? [...statuses, 408] : statuses);
        const wrong = answers.slice(0, FLOOD).findIndex((a, i) => !a.body.equals(expected.get(requests[i]!.target)!));
        expect(wrong, `answer ${wrong} (${requests[wrong]?.target})`).toBe(-1);
      } finally {
        await server.close();
      }
    },
    60_000,
  );
});
