import { get } from 'node:http';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { serve } from '../src/app/serve.js';
import { makeCity, tempDir } from './helpers.js';

// serve()'s close() while answers are still being sent: it stops accepting, lets each answer a
// client reads finish, and cuts what is still open after closeGrace (a client that sends its
// request and never reads a page of 13 MB holds it forever otherwise), then says how many it cut.
// 20,000 cities: the one-page answer (page_size above the count) is about 13 MB.
const COUNT = 20_000;
const GRACE = 1_500;
const SETTINGS = { collation: 'codepoint', orderings: ['default'], pageSizes: [10] } as const;
let dir: string;
let cleanup: () => Promise<void>;
const sockets: Socket[] = [];

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('cities-serve-close-'));
  const names = ['Zürich', 'القاهرة', '東京', 'Москва', 'São Paulo', 'Kraków'];
  const cities = Array.from({ length: COUNT }, (_, i) => makeCity(i + 1, { name: `${names[i % 6]} ${i}` }));
  await writeFile(join(dir, 'cities.json'), JSON.stringify(cities));
  await build({ data: join(dir, 'cities.json'), out: join(dir, 'site'), ...SETTINGS });
}, 120_000);
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await cleanup();
});

/** A served site and what it logged. */
async function served() {
  const lines: string[] = [];
  const server = await serve({
    dir: join(dir, 'site'),
    port: 0,
    limits: { closeGrace: GRACE },
    log: (l) => lines.push(l),
  });
  return { server, lines, port: Number(new URL(server.url).port) };
}

/** A raw connection that sends a GET of `target` and never reads. */
function stalled(port: number, target: string): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
      resolve(socket);
    });
    socket.pause();
    socket.on('error', () => undefined);
    sockets.push(socket);
  });
}

/** Whether close() ended it: resolves once the server's side closed it. */
const closedByServer = (socket: Socket) =>
  new Promise<void>((resolve) => {
    socket.on('close', () => resolve());
    socket.resume();
  });

const ALL = `/cities/?page_size=${COUNT + 1}`;

describe('close() while answers are being sent', () => {
  it.each([
    ['the one-page answer from its file', ALL],
    ['the one-page answer computed (an ordering not built)', `${ALL}&ordering=-name_en`],
    ['the browsable page of every city, computed', `${ALL}&format=api`],
  ])('a client that never reads %s: cut after closeGrace, not before, and said', async (_, target) => {
    const { server, lines, port } = await served();
    const client = await stalled(port, target);
    await new Promise((resolve) => setTimeout(resolve, 500)); // its answer under way, the socket's buffers full
    const started = performance.now();
    await server.close();
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(GRACE - 50);
    expect(took).toBeLessThan(GRACE + 2_000);
    await closedByServer(client);
    expect(lines.filter((line) => line.startsWith('closing:'))).toEqual([
      `closing: cut 1 connection still open ${GRACE / 1000} s after close began (answers their clients were not reading)`,
    ]);
  });

  it('a client reading the one-page answer as close begins gets all of it, and close ends with it', async () => {
    const { server, lines, port } = await served();
    const done = new Promise<{ bytes: number; length: number; complete: boolean }>((resolve, reject) => {
      get({ port, host: '127.0.0.1', path: `${ALL}&ordering=-name_en` }, (res) => {
        let bytes = 0;
        let closing: Promise<void> | undefined;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          closing ??= server.close(); // at its first bytes: most of the page is still to come
        });
        res.on('end', () =>
          closing!.then(() =>
            resolve({ bytes, length: Number(res.headers['content-length']), complete: res.complete }),
          ),
        );
        res.on('error', reject);
      }).on('error', reject);
    });
    const started = performance.now();
    const { bytes, length, complete } = await done;
    expect(complete).toBe(true);
    expect(bytes).toBe(length);
    expect(bytes).toBeGreaterThan(10_000_000);
    expect(performance.now() - started).toBeLessThan(GRACE);
    expect(lines.filter((line) => line.startsWith('closing:'))).toEqual([]);
  });

  // A --watch rebuild waits for the site's file sends to end before it builds (live-site.ts replace): close()
  // awaited that rebuild before closing the servers, so a client that never read held it until sendTimeout (60 s).
  it('a client that never reads the one-page file while a --watch rebuild waits for it: close() still cuts it after closeGrace, the rebuild stopped', async () => {
    const data = join(dir, 'watched', 'cities.json');
    const site = join(dir, 'watched', 'site');
    await mkdir(join(dir, 'watched'));
    await copyFile(join(dir, 'cities.json'), data);
    await build({ data, out: site, ...SETTINGS });
    const lines: string[] = [];
    const server = await serve({
      dir: site,
      data,
      watch: true,
      port: 0,
      limits: { closeGrace: GRACE },
      log: (l) => lines.push(l),
    });
    const client = await stalled(Number(new URL(server.url).port), ALL);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await writeFile(data, (await readFile(data, 'utf8')).replace('Zürich 0', 'Zürich zero'));
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // the change seen, its rebuild waiting for the send
    const started = performance.now();
    await server.close();
    expect(performance.now() - started).toBeLessThan(GRACE + 2_000);
    await closedByServer(client);
    expect(lines.filter((line) => line.includes('changed'))).toEqual([
      `${data} changed: stopped the rebuild as the server stopped; the site left as it was`,
    ]);
  }, 90_000);

  it('an idle keep-alive connection is closed at once: close() does not wait out the grace', async () => {
    const { server, port } = await served();
    const socket = await stalled(port, '/cities/?page=2');
    const closed = closedByServer(socket);
    await new Promise((resolve) => setTimeout(resolve, 200)); // answered, read, idle
    const started = performance.now();
    await server.close();
    await closed;
    expect(performance.now() - started).toBeLessThan(GRACE / 2);
  });
});
