import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIT, tempDir } from './helpers.js';
import { readResponses } from './raw-http.js';
import { startCli } from './serve-helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-serve-cli-')));
afterAll(() => cleanup());

describe('cities-api serve as a process', () => {
  it('prints its URL, and stops cleanly on SIGTERM and SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const server = await startCli([join(root, 'site'), '--data', join(KIT, 'cities11.csv'), '--port', '0']);
      expect(server.output()).toMatch(
        // The first run builds the site first: its dataset line and progress come before the URL.
        /^serving .*site at http:\/\/127\.0\.0\.1:\d+\/cities\/ \(11 cities; links on http:\/\/127\.0\.0\.1:\d+\)$/m,
      );
      expect((await fetch(`${server.url}/cities/`)).status).toBe(200);
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
      server.child.kill(signal);
      expect(await exited).toBe(0);
      expect(server.output()).toMatch(/stopped\n$/);
    }
  });

  // The serving line is printed as serve() resolves: a signal sent on it came between the handler of the start (which
  // stops the first build) and the one of serving, and was lost (libuv had caught it): the server served on.
  it.each(['SIGTERM', 'SIGINT'] as const)('stops on %s sent as soon as its URL is printed', async (signal) => {
    const server = await startCli([join(root, 'site'), '--port', '0']);
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
    server.child.kill(signal);
    const late = new Promise<string>((resolve) => setTimeout(() => resolve('still serving after 15 s'), 15_000));
    const ended = await Promise.race([exited, late]);
    if (ended !== 0) server.child.kill('SIGKILL');
    expect(ended).toBe(0);
    expect(server.output()).toMatch(/stopped\n$/);
  });

  it('every request answered before SIGTERM has its line printed before it stops (none held back in the buffer)', async () => {
    const server = await startCli([join(root, 'site'), '--data', join(KIT, 'cities11.csv'), '--port', '0']);
    for (let i = 1; i <= 40; i++)
      expect((await fetch(`${server.url}/cities/?page_size=3&page=${i % 4}`)).status).toBeLessThan(500);
    await server.stop();
    const lines = server.output().split('\n');
    const logged = lines.filter((line) => /"GET \/cities\/\?page_size=3&page=\d HTTP\/1\.1" \d{3} /.test(line));
    expect(logged.length).toBe(40);
    expect(lines.indexOf(logged.at(-1)!)).toBeLessThan(lines.indexOf('stopped'));
  });

  it('a stdout nobody reads: requests are answered, the log drops what passes its bound and then says how many lines', async () => {
    const server = await startCli([join(root, 'site'), '--data', join(KIT, 'cities11.csv'), '--port', '0']);
    try {
      server.child.stdout!.pause(); // the pipe fills (64 KiB), then the server holds at most 1 MiB of log
      const target = (i: number) => `/nothing/${'x'.repeat(190)}${i}`; // a 404, about 260 bytes of log each
      const requests = 6000; // about 1.6 MB of log
      // 8 clients, each pipelining its share on one connection: the server answers and logs them as it would
      // 8 clients asking one at a time, and this process reads raw answers instead of running fetch() 6,000 times.
      const clients = 8;
      const { port } = new URL(server.url);
      const client = async (c: number) => {
        const socket = connect(Number(port), '127.0.0.1');
        await once(socket, 'connect');
        const mine = Array.from({ length: requests / clients }, (_, i) => target(c + i * clients));
        socket.write(mine.map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
        const statuses: number[] = [];
        expect(await readResponses(socket, mine.length, (res) => statuses.push(res.status))).toBe(mine.length);
        socket.destroy();
        expect(statuses.filter((status) => status !== 404)).toEqual([]);
      };
      await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
      server.child.stdout!.resume();
      const note = /^request log: (\d+) lines dropped, the log's reader did not keep up$/m;
      for (let i = 0; i < 200 && !note.test(server.output()); i++) await new Promise((r) => setTimeout(r, 50));
      await server.stop();
      const dropped = Number(note.exec(server.output())?.[1]);
      const printed = server
        .output()
        .split('\n')
        .filter((line) => line.includes('"GET /nothing/')).length;
      expect(dropped).toBeGreaterThan(0);
      expect(printed + dropped).toBe(requests);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('a port in use is a clear error with exit code 1', async () => {
    const first = await startCli([join(root, 'site'), '--port', '0']);
    try {
      const port = new URL(first.url).port;
      const second = startCli([join(root, 'site'), '--port', port]);
      await expect(second).rejects.toThrow(
        new RegExp(
          `serve exited \\(1\\) before it was ready:\\ncities-api: port ${port} on 127.0.0.1 is already in use`,
        ),
      );
    } finally {
      await first.stop();
    }
  });

  it('--writable without CITIES_API_TOKEN is refused with exit code 2', async () => {
    await expect(
      startCli([join(root, 'site'), '--data', join(KIT, 'cities11.csv'), '--writable', '--port', '0'], {
        CITIES_API_TOKEN: '',
      }),
    ).rejects.toThrow(/exited \(2\) before it was ready:\ncities-api: --writable needs a token/);
  });
});
