import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer as createSocketServer } from 'node:net';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import sirv from 'sirv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileCache, type CachedFile } from '../src/http/file-cache.js';
import { RelayResponse } from '../src/http/sirv-response.js';
import { tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
let server: Server;
let url: string;
const big = Buffer.alloc(2 * 1024 * 1024, 'x');
const socket = createSocketServer();
const SITE_OPTIONS = { dev: true, etag: true, gzip: true, brotli: true, extensions: [] };

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-file-cache-'));
  await mkdir(join(root, 'site'));
  await writeFile(join(root, 'site', 'small.json'), '{"a":1}');
  await writeFile(join(root, 'site', 'big.json'), big);
  // Only a gzip sibling: a client accepting br and gzip gets it, one accepting only br must not.
  await writeFile(join(root, 'site', 'gz-only.json'), '{"plain":true}');
  await writeFile(join(root, 'site', 'gz-only.json.gz'), gzipSync('{"plain":true}'));
  // A socket where a file should be: it exists, but opening it fails (ENXIO), even for root.
  await new Promise<void>((resolve) => socket.listen(join(root, 'site', 'socket.json'), resolve));
  const files = sirv(join(root, 'site'), SITE_OPTIONS);
  server = createServer((req, res) => {
    const fallback = () => void res.writeHead(404).end('fallback');
    files(req, new RelayResponse(res, fallback) as unknown as ServerResponse, fallback);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  socket.close();
  await new Promise((resolve) => server.close(resolve));
  await cleanup();
});

describe('sirv answers relayed, as the reference sends them', () => {
  it.each([
    ['a small file', '/small.json', 7],
    ['a large file', '/big.json', big.length],
  ])('%s carries no Cache-Control', async (_, path, length) => {
    const res = await fetch(url + path);
    expect([res.status, res.headers.get('cache-control'), (await res.arrayBuffer()).byteLength]).toEqual([
      200,
      null,
      length,
    ]);
    expect(res.headers.get('etag')).toMatch(/^W\//);
  });

  it('a file that cannot be read goes to the fallback, and the server lives on', async () => {
    const res = await fetch(`${url}/socket.json`);
    expect([res.status, await res.text()]).toEqual([404, 'fallback']);
    expect((await fetch(`${url}/small.json`)).status).toBe(200);
  });

  it('HEAD of a large file: headers, no body', async () => {
    const res = await fetch(`${url}/big.json`, { method: 'HEAD' });
    expect([res.status, res.headers.get('content-length'), (await res.arrayBuffer()).byteLength]).toEqual([
      200,
      String(big.length),
      0,
    ]);
  });
});

const fresh = () => new FileCache(sirv(join(root, 'site'), SITE_OPTIONS), { 'Content-Type': 'application/json' });
const bodyOf = (found: unknown) => (found as CachedFile).body;
const encodingOf = (found: unknown) =>
  Object.entries((found as CachedFile).headers).find(([name]) => name.toLowerCase() === 'content-encoding')?.[1];

describe('FileCache', () => {
  it.each([
    ['captures a small file with sirv’s headers, minus Cache-Control', 'small.json', 'entry'],
    ['leaves a file over 1 MiB to sirv', 'big.json', 'large'],
    ['reports a missing file as absent', 'missing.json', 'absent'],
    ['reports a file that cannot be read as absent', 'socket.json', 'absent'],
  ])('%s', async (_, file, expected) => {
    const found = await fresh().get(file, undefined);
    expect(typeof found === 'string' ? found : 'entry').toBe(expected);
    if (typeof found === 'object') {
      expect(found.headers).toMatchObject({ 'Content-Type': 'application/json', ETag: expect.stringMatching(/^W\//) });
      expect(Object.keys(found.headers).map((h) => h.toLowerCase())).not.toContain('cache-control');
    }
  });

  it('a missing file is looked for again: once it exists, it is served', async () => {
    const cache = fresh();
    expect(await cache.get('later.json', undefined)).toBe('absent');
    await writeFile(join(root, 'site', 'later.json'), '{"later":1}');
    try {
      expect(bodyOf(await cache.get('later.json', undefined)).toString()).toBe('{"later":1}');
    } finally {
      await rm(join(root, 'site', 'later.json'));
    }
  });

  // Each pair: two Accept-Encoding headers asked one after the other, in both orders; each must
  // get what sirv itself sends it, whatever was asked (and cached) before.
  it.each([
    ['br and gzip, then br alone', 'br, gzip', 'br'],
    ['gzip, then identity', 'gzip', undefined],
    ['gzip, then GZIP (sirv’s test is case-sensitive)', 'gzip', 'GZIP'],
    ['brotli spelled out, then x-gzip', 'brotli', 'x-gzip'],
    ['br;q=0 (sirv ignores q), then none', 'br;q=0, gzip', ''],
  ])('no collision between Accept-Encoding values: %s', async (_, first, second) => {
    for (const [a, b] of [
      [first, second],
      [second, first],
    ]) {
      const cache = fresh();
      const expected = await Promise.all([a, b].map((value) => fresh().get('gz-only.json', value)));
      const got = [await cache.get('gz-only.json', a), await cache.get('gz-only.json', b)];
      expect(got.map(encodingOf)).toEqual(expected.map(encodingOf));
      expect(got.map(bodyOf)).toEqual(expected.map(bodyOf));
    }
  });
});
