import { writeFile } from 'node:fs/promises';
import { createServer, get, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHere } from '../src/app/build.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { createHandler } from '../src/http/node-handler.js';
import { SendGate } from '../src/http/send-gate.js';
import { loadSite, type LoadedSite } from '../src/http/site-state.js';
import { makeCity, tempDir } from './helpers.js';
import { pipelined, type PipelinedClient, type PipelinedRequest } from './pipelined-client.js';

// serve sends a computed page as it lies in the scratch it was assembled in (http/page-memory.ts):
// a page a client does not read at once stays in node's hands, its scratch set aside until the
// response closes, so the pages computed meanwhile for other clients never write over it.

let dir: string;
let cleanup: () => Promise<void>;
let site: LoadedSite;
let server: Server;
let port: number;
/** The same site behind a send gate, as serve answers (app/front.ts): an answer is computed once its connection can take it. */
let gated: Server;
let gatedPort: number;
/** Where the memory's first scratch begins: scratches grown since lie after it. */
let firstScratchAt: number;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  // Long names: a page of 400 cities is about 800 KB, more than a loopback socket takes at once.
  const cities = Array.from({ length: 900 }, (_, i) => makeCity(i + 1, { name: `City ${i} ${'x'.repeat(90)}` }));
  await writeFile(join(dir, 'cities.json'), JSON.stringify(cities));
  await buildHere({
    data: join(dir, 'cities.json'),
    out: join(dir, 'site'),
    baseUrl: 'http://x.test',
    pageSizes: [10],
  });
  site = await loadSite(join(dir, 'site'));
  server = createServer(createHandler({ site: () => site }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  gated = createServer(createHandler({ site: () => site, gate: new SendGate(64 * 1024 * 1024, 60_000) }));
  await new Promise<void>((resolve) => gated.listen(0, '127.0.0.1', resolve));
  gatedPort = (gated.address() as AddressInfo).port;
  firstScratchAt = memory().scratchAt;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await new Promise((resolve) => gated?.close(resolve));
  site?.release();
  await cleanup();
});

/** The page answerListing computes for `query`, copied (nothing lent). */
const expected = (query: string) =>
  Buffer.from(bodyBytes(answerListing(site.context.index, parseQuery(query), site.context.spec.baseUrl).body));

const fetchBody = (query: string, at = port) =>
  new Promise<Buffer>((resolve, reject) => {
    get(`http://127.0.0.1:${at}/cities/?${query}`, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks)));
    }).on('error', reject);
  });

/**
 * Asks for each of `queries` on one connection (pipelined), reading nothing until read() is called:
 * once the kernel's buffers are full, node holds the rest of the pages. read() gives their bodies.
 */
function slowClient(queries: readonly string[]) {
  const socket = connect(gatedPort, '127.0.0.1');
  socket.pause();
  socket.write(queries.map((query) => `GET /cities/?${query} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
  return {
    read: () =>
      new Promise<Buffer[]>((resolve, reject) => {
        let received = Buffer.alloc(0);
        const bodies: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => {
          received = Buffer.concat([received, chunk]);
          for (let end = received.indexOf('\r\n\r\n'); end >= 0; end = received.indexOf('\r\n\r\n')) {
            const length = Number(/content-length: (\d+)/i.exec(received.subarray(0, end).toString())?.[1]);
            if (received.length < end + 4 + length) break;
            bodies.push(received.subarray(end + 4, end + 4 + length));
            received = received.subarray(end + 4 + length);
          }
          if (bodies.length === queries.length) {
            socket.destroy();
            resolve(bodies);
          }
        });
        socket.on('error', reject);
        socket.resume();
      }),
  };
}

const memory = () => site.context.index.storage!.memory!;
const until = async (done: () => boolean, ms = 10_000) => {
  for (const end = Date.now() + ms; !done() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
};

describe('computed pages a client is slow to read', () => {
  it.each([
    ['pages of 400 cities (about 770 KB)', 400],
    ['pages of 450 cities, and one of 7 between', 450],
  ])('%s: the client gets each whole, and the pages computed meanwhile for others are right', async (_, size) => {
    const queries = Array.from(
      { length: 8 },
      (_, i) => `page_size=${i === 4 ? 7 : size}&page=${(i % 2) + 1}&n=${size}${i}`,
    );
    const at = memory().scratchAt;
    const slow = slowClient(queries);
    // Some of its pages handed to node, which could not write them all: their scratches are set aside.
    await until(() => memory().scratchAt !== at);
    expect(memory().scratchAt).not.toBe(at);
    for (const query of [`page_size=${size}&page=1&n=a`, 'page_size=7&page=3&n=b', `page_size=${size}&page=2&n=c`])
      expect((await fetchBody(query, gatedPort)).equals(expected(query))).toBe(true);
    const bodies = await slow.read();
    expect(bodies.map((body, i) => body.equals(expected(queries[i]!)))).toEqual(queries.map(() => true));
  });
});

/** A scratch: 16 pages of 64 KiB (page-memory.ts). */
const SCRATCH_BYTES = 16 * 64 * 1024;

/** Scratches set aside for pages still being sent: grown onto the memory, less the free ones and the one in use. */
function heldScratches(): number {
  const pages = memory() as unknown as { memory: { buffer: SharedArrayBuffer }; free: unknown[]; scratch?: Uint8Array };
  const grown = (pages.memory.buffer.byteLength - firstScratchAt) / SCRATCH_BYTES;
  return grown - pages.free.length - (pages.scratch ? 1 : 0);
}

const large = (tag: string, i: number): PipelinedRequest => ({
  target: `/cities/?page_size=400&page=${(i % 2) + 1}&n=${tag}${i}`,
});
const larges = (tag: string, n: number) => Array.from({ length: n }, (_, i) => large(tag, i));
const queryOf = (request: PipelinedRequest) => request.target.slice('/cities/?'.length);

/** Pages computed for other clients meanwhile (large and small, never asked before): each right. */
async function othersRight(at: number, tag: string) {
  for (const query of [`page_size=400&page=1&o=${tag}`, `page_size=7&page=3&o=${tag}`, `page_size=450&page=2&o=${tag}`])
    expect((await fetchBody(query, at)).equals(expected(query)), query).toBe(true);
}

/** Each answer a client got is its request's page (a HEAD's or a 304's: no body). */
function expectAnswers(requests: readonly PipelinedRequest[], answers: readonly { status: number; body: Buffer }[]) {
  const wanted = requests.slice(0, answers.length).map((r) => (r.method === 'HEAD' || r.headers ? 0 : -1));
  expect(
    answers.map((a, i) => (wanted[i] === 0 ? a.body.length : a.body.equals(expected(queryOf(requests[i]!))))),
  ).toEqual(wanted.map((w) => (w === 0 ? 0 : true)));
}

/** A client's behaviour, on the server at `at`: it checks what it got; afterwards every scratch must come back. */
type Behaviour = (at: number, tag: string) => Promise<void>;

/**
 * Waits until a page is held. Behind the send gate, one is (the page node could not write whole);
 * without it, a response queued behind another is not lent a page (send-listing.ts), so none may be.
 */
const waitHeld = async (at: number) => {
  await until(() => heldScratches() > 0, at === gatedPort ? 10_000 : 1_000);
  if (at === gatedPort) expect(heldScratches()).toBeGreaterThan(0);
};

const BEHAVIOURS: [string, Behaviour][] = [
  [
    'pipelines 12 large pages, reads none while others are answered, then reads all',
    async (at, tag) => {
      const requests = larges(tag, 12);
      const client = pipelined(at, requests);
      await waitHeld(at);
      await othersRight(at, tag);
      const answers = await client.read();
      expect(answers).toHaveLength(12);
      expectAnswers(requests, answers);
    },
  ],
  [
    'pipelines 12 large pages (more than the kernel takes), reads none, then resets the connection',
    async (at, tag) => {
      const client = pipelined(at, larges(tag, 12));
      await waitHeld(at);
      client.reset();
      await othersRight(at, tag);
    },
  ],
  [
    'pipelines 12 large pages and half-closes its side, then reads what comes',
    async (at, tag) => {
      const requests = larges(tag, 12);
      const client = pipelined(at, requests, true);
      await waitHeld(at);
      await othersRight(at, tag);
      expectAnswers(requests, await client.read());
    },
  ],
  [
    'pipelines 12 large pages, reads 100 KB, then resets the connection mid-body',
    async (at, tag) => {
      const client = pipelined(at, larges(tag, 12));
      await waitHeld(at);
      await client.readThenReset(100_000);
      await othersRight(at, tag);
    },
  ],
  [
    'HEADs and conditional GETs between large pages, read late',
    async (at, tag) => {
      const etag = await new Promise<string>((resolve, reject) =>
        get(`http://127.0.0.1:${at}${large(tag, 1).target}`, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.headers.etag)));
        }).on('error', reject),
      );
      const requests: PipelinedRequest[] = [
        large(tag, 0),
        { ...large(tag, 1), method: 'HEAD' },
        { ...large(tag, 1), headers: `If-None-Match: ${etag}\r\n` },
        large(tag, 2),
        { ...large(tag, 3), method: 'HEAD' },
        ...larges(`${tag}m`, 8),
      ];
      const client = pipelined(at, requests);
      await waitHeld(at);
      await othersRight(at, tag);
      const answers = await client.read();
      expect(answers.map((a) => a.status)).toEqual([200, 200, 304, 200, 200, ...larges('', 8).map(() => 200)]);
      expectAnswers(requests, answers);
    },
  ],
  [
    '40 clients at once, each pipelining 6 large pages and reading none (more than the 32 scratches)',
    async (at, tag) => {
      const clients = Array.from({ length: 40 }, (_, c) => [c, pipelined(at, larges(`${tag}c${c}-`, 6))] as const);
      await until(() => !memory().scratch, at === gatedPort ? 10_000 : 1_000);
      // Behind the gate, every scratch is held by now: the pages computed meanwhile are copied.
      if (at === gatedPort) expect(memory().scratch).toBeUndefined();
      await othersRight(at, tag);
      for (const [c, client] of clients) expectAnswers(larges(`${tag}c${c}-`, 6), await client.read());
    },
  ],
  [
    '40 clients one after another, each resetting its connection while a page of it is held',
    async (at, tag) => {
      const clients: PipelinedClient[] = [];
      for (let c = 0; c < 40; c++) {
        await until(() => heldScratches() === 0);
        const client = pipelined(at, larges(`${tag}c${c}-`, 8));
        await until(() => heldScratches() > 0, at === gatedPort ? 5_000 : 200);
        client.reset();
        clients.push(client);
      }
      await othersRight(at, tag);
    },
  ],
];

describe.each([
  ['behind a send gate, as serve answers', 'g', () => gatedPort],
  ['without a send gate', 'b', () => port],
])('clients as adversaries, %s: no page written over while it is sent, every scratch given back', (_, server, at) => {
  it.each(BEHAVIOURS.map(([name, behaviour], i) => [name, behaviour, i] as const))(
    'a client that %s',
    async (_, behaviour, i) => {
      // Queries never asked before (computed, not remembered) in each case.
      await behaviour(at(), `${server}${i}-`);
      // Every connection closed by now or soon: each scratch set aside for one comes back.
      await until(() => heldScratches() === 0);
      expect(heldScratches()).toBe(0);
      // And pages are assembled in the memory again (none copied for want of a scratch).
      expect(memory().scratch).toBeDefined();
      await othersRight(at(), 'after');
    },
  );
});

it('a client that reads nothing until the server cuts it (its send timeout): its scratch comes back', async () => {
  const cutting = createServer(createHandler({ site: () => site, gate: new SendGate(64 * 1024 * 1024, 200) }));
  await new Promise<void>((resolve) => cutting.listen(0, '127.0.0.1', resolve));
  try {
    const client = pipelined((cutting.address() as AddressInfo).port, larges('cut', 12));
    await until(() => heldScratches() > 0);
    expect(heldScratches()).toBeGreaterThan(0);
    await until(() => heldScratches() === 0);
    expect(heldScratches()).toBe(0);
    client.reset();
    await othersRight(gatedPort, 'cut');
  } finally {
    await new Promise((resolve) => cutting.close(resolve));
  }
});

/** `start` and as many `fill`s (then `y`s) after it as make a target of exactly `length` characters. */
const padded = (start: string, fill: string, length: number) => {
  const room = length - start.length;
  return `${start}${fill.repeat(Math.floor(room / fill.length))}${'y'.repeat(room % fill.length)}`;
};

describe('crafted targets answered by serve (query parsed in place, page assembled in the memory): the page of the query read whole', () => {
  it.each([
    ['a % at the very end', '/cities/?page_size=7&page=9%'],
    ['a % and one hex digit at the very end', '/cities/?page_size=7&page=9&x=%4'],
    ['a % and one hex digit ending a field', '/cities/?a=%4&page=10&page_size=7'],
    ['a UTF-8 character split between fields', '/cities/?a=%E5%90&b=%8D&page=2&page_size=7'],
    ['a UTF-8 character cut by the end', '/cities/?page_size=7&page=2&a=%E5%90'],
    ['an escape cut by the fragment', '/cities/?page_size=7&page=1%30#0'],
    ['page 9 of 900 (next: 10)', '/cities/?page_size=1&page=9'],
    ['page 10 (previous: 9)', '/cities/?page_size=1&page=10'],
    ['page 99 and 100', '/cities/?page_size=1&page=100&z=1'],
    ['the last page but one', '/cities/?page_size=1&page=899'],
    ['the last page, asked as last', '/cities/?a=1&page_size=1&page=last'],
    ['a target of exactly 8192 characters', padded('/cities/?page_size=7&page=100&a=', '%41', 8192)],
    ['a target of 8192 characters ending in %', `${padded('/cities/?page=99&page_size=7&a=', 'y', 8191)}%`],
  ])('%s', async (_, target) => {
    const [answer] = await pipelined(gatedPort, [{ target }]).read();
    const query = target.slice('/cities/?'.length).split('#')[0]!;
    expect(answer!.body.equals(expected(query))).toBe(true);
  });
});
