import { writeFile } from 'node:fs/promises';
import { createServer, get, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHere } from '../src/app/build.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { createHandler } from '../src/http/node-handler.js';
import { loadSite, type LoadedSite } from '../src/http/site-state.js';
import { makeCity, tempDir } from './helpers.js';

// serve sends a computed page as it lies in the scratch it was assembled in (http/page-memory.ts):
// a page a client does not read at once stays in node's hands, its scratch set aside until the
// response closes, so the pages computed meanwhile for other clients never write over it.

let dir: string;
let cleanup: () => Promise<void>;
let site: LoadedSite;
let server: Server;
let port: number;

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
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  site?.release();
  await cleanup();
});

/** The page answerListing computes for `query`, copied (nothing lent). */
const expected = (query: string) =>
  Buffer.from(bodyBytes(answerListing(site.context.index, parseQuery(query), site.context.spec.baseUrl).body));

const fetchBody = (query: string) =>
  new Promise<Buffer>((resolve, reject) => {
    get(`http://127.0.0.1:${port}/cities/?${query}`, (res) => {
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
  const socket = connect(port, '127.0.0.1');
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
const until = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
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
      expect((await fetchBody(query)).equals(expected(query))).toBe(true);
    const bodies = await slow.read();
    expect(bodies.map((body, i) => body.equals(expected(queries[i]!)))).toEqual(queries.map(() => true));
  });
});
