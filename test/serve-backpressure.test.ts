import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { route } from '../src/http/route.js';
import { makeCity, tempDir, testSpec } from './helpers.js';
import { readResponses } from './raw-http.js';
import { rawRequest, startCli } from './serve-helpers.js';

// Clients that send and do not read, against a real `cities-api serve` process: what it holds in
// memory stays bounded, other clients are still answered, and every answer, once read, is whole,
// right and in order. 20,000 cities: a page of 2,000 is about 1.3 MB, the one-page answer 13 MB.
const COUNT = 20_000;
let cleanup: () => Promise<void>;
let server: Awaited<ReturnType<typeof startCli>>;
let index: CityIndex;
const sockets: Socket[] = [];

beforeAll(async () => {
  let dir: string;
  ({ dir, cleanup } = await tempDir('cities-backpressure-'));
  const names = ['Zürich', 'القاهرة', '東京', 'Москва', 'São Paulo', 'Kraków'];
  await writeFile(
    join(dir, 'cities.json'),
    JSON.stringify(
      Array.from({ length: COUNT }, (_, i) =>
        makeCity(i + 1, { name: `${names[i % names.length]} ${(i * 7919) % COUNT}`, top: i % 97 === 0 }),
      ),
    ),
  );
  server = await startCli([
    join(dir, 'site'),
    '--data',
    join(dir, 'cities.json'),
    '--port',
    '0',
    '--collation',
    'codepoint',
    '--orderings',
    'default',
    '--page-sizes',
    '10',
  ]);
  index = new CityIndex(await readDataset(join(dir, 'cities.json')), 'codepoint');
}, 120_000);
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await server?.stop();
  await cleanup();
});

/** Resident memory of the server process, in MB (Linux /proc). */
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1]) / 1024;

/** A connection that sends `requests` at once and reads nothing until told. */
function flood(requests: string[]): Promise<Socket> {
  const { port } = new URL(server.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(requests.map((target) => `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
      resolve(socket);
    });
    socket.pause();
    sockets.push(socket);
  });
}

/** The peak RSS growth over `ms`, sampled every 100 ms, from `before`. */
async function growth(before: number, ms: number): Promise<number> {
  let peak = rss();
  for (let t = 0; t < ms; t += 100) {
    await new Promise((r) => setTimeout(r, 100));
    peak = Math.max(peak, rss());
  }
  return peak - before;
}

const expected = (target: string) =>
  bodyBytes(answerListing(index, parseQuery(target.split('?')[1]!), server.url).body);

/** Sequential requests from another client while the flood waits: all answered (latency reported). */
async function otherClient(): Promise<number[]> {
  const times: number[] = [];
  for (const query of ['page=2', 'page_size=7&page=3', 'ordering=name_fr&page=40']) {
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const res = await rawRequest(`${server.url}/cities/?${query}`);
      expect(res.status).toBe(200);
      times.push(performance.now() - started);
    }
  }
  return times.sort((a, b) => a - b);
}

describe('clients that do not read what they asked for', () => {
  it('ten connections pipelining 100 large live pages each: memory bounded, others answered, every answer whole and in order', async () => {
    await rawRequest(`${server.url}/cities/?page_size=2000&warm=1`);
    const before = rss();
    const targets = (c: number) =>
      Array.from({ length: 100 }, (_, i) => `/cities/?page_size=2000&page=${1 + (i % 10)}&n=${c}-${i}`);
    const connections = await Promise.all(Array.from({ length: 10 }, (_, c) => flood(targets(c))));
    const grown = await growth(before, 2000);
    const times = await otherClient();
    console.log(
      `pipelined flood: server RSS +${grown.toFixed(0)} MB (answers asked: 1,000 × 1.3 MB); another client meanwhile: median ${times[7]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms`,
    );
    expect(grown).toBeLessThan(150);
    for (const c of [0, 1]) {
      const read = await readResponses(connections[c]!, 100, (res, i) => {
        expect(res.status).toBe(200);
        expect(res.body.equals(expected(targets(c)[i]!)), `answer ${i} on connection ${c}`).toBe(true);
      });
      expect(read).toBe(100);
    }
  }, 120_000);

  it('slow readers of the one-page answer (13 MB; from the file and computed) hold about a part each, not the page', async () => {
    const before = rss();
    const targets = Array.from({ length: 24 }, (_, i) =>
      i % 2 ? `/cities/?page_size=${COUNT}&live=${i}` : `/cities/?page_size=${COUNT}`,
    );
    const connections = await Promise.all(targets.map((target) => flood([target])));
    const grown = await growth(before, 2500);
    const times = await otherClient();
    console.log(
      `slow readers: server RSS +${grown.toFixed(0)} MB (answers asked: 24 × 13 MB); another client meanwhile: median ${times[7]!.toFixed(1)} ms`,
    );
    expect(grown).toBeLessThan(40);
    for (const i of [0, 1]) {
      await readResponses(connections[i]!, 1, (res) => {
        expect(res.status).toBe(200);
        expect(res.body.equals(expected(targets[i]!))).toBe(true);
      });
    }
  }, 120_000);

  it('slow readers of the one-page answer as the browsable page and as indented JSON: produced part by part, never whole', async () => {
    const before = rss();
    const accepts = ['text/html', 'application/json; indent=4'];
    const { port } = new URL(server.url);
    const connections = await Promise.all(
      Array.from(
        { length: 8 },
        (_, i) =>
          new Promise<Socket>((resolve) => {
            const socket = connect(Number(port), '127.0.0.1', () => {
              socket.write(`GET /cities/?page_size=${COUNT} HTTP/1.1\r\nHost: x\r\nAccept: ${accepts[i % 2]}\r\n\r\n`);
              resolve(socket);
            });
            socket.pause();
            sockets.push(socket);
          }),
      ),
    );
    const grown = await growth(before, 2500);
    console.log(
      `slow readers of pretty pages: server RSS +${grown.toFixed(0)} MB (4 browsable pages and 4 indented answers of all 20,000 cities)`,
    );
    expect(grown).toBeLessThan(60);
    for (const i of [0, 1]) {
      const answer = route(
        { method: 'GET', target: `/cities/?page_size=${COUNT}`, accept: accepts[i] },
        { index, spec: testSpec({ baseUrl: server.url, count: COUNT, pageSizes: [10] }), useFiles: false },
      );
      await readResponses(connections[i]!, 1, (res) => {
        expect(answer.kind === 'answer' && res.body.equals(bodyBytes(answer.body as Iterable<Buffer>))).toBe(true);
      });
    }
  }, 120_000);

  it('HEAD of the one-page answer computed live: its length, no body', async () => {
    const head = await rawRequest(`${server.url}/cities/?page_size=${COUNT}&live=head`, { method: 'HEAD' });
    expect([head.status, head.body.length, head.headers['content-length']]).toEqual([
      200,
      0,
      String(expected(`/cities/?page_size=${COUNT}&live=head`).length),
    ]);
  });
});
