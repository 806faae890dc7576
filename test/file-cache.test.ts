import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import sirv from 'sirv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileCache, withoutCacheControl } from '../src/file-cache.js';
import { tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
let server: Server;
let url: string;
const big = Buffer.alloc(2 * 1024 * 1024, 'x');

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-file-cache-'));
  await mkdir(join(root, 'site'));
  await writeFile(join(root, 'site', 'small.json'), '{"a":1}');
  await writeFile(join(root, 'site', 'big.json'), big);
  const files = sirv(join(root, 'site'), { dev: true, etag: true });
  server = createServer((req, res) => files(req, withoutCacheControl(res), () => void res.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await cleanup();
});

describe('sirv answers, as the reference sends them', () => {
  it.each([['a small file', '/small.json', 7], ['a file sent by sirv itself (too big to cache)', '/big.json', big.length]])('%s carries no Cache-Control', async (_, path, length) => {
    const res = await fetch(url + path);
    expect([res.status, res.headers.get('cache-control'), (await res.arrayBuffer()).byteLength]).toEqual([200, null, length]);
    expect(res.headers.get('etag')).toMatch(/^W\//);
  });
});

describe('FileCache', () => {
  it.each([
    ['captures a small file with sirv’s headers, minus Cache-Control', 'small.json', true],
    ['leaves a file over 1 MiB to sirv', 'big.json', false],
    ['has nothing for a missing file', 'missing.json', false],
  ])('%s', async (_, file, cached) => {
    const fresh = new FileCache(sirv(join(root, 'site'), { dev: true, etag: true }), { 'Content-Type': 'application/json' });
    const entry = await fresh.get(file, undefined);
    expect(!!entry).toBe(cached);
    if (entry) expect(entry.headers).toMatchObject({ 'Content-Type': 'application/json', etag: expect.stringMatching(/^W\//) });
    if (entry) expect(Object.keys(entry.headers).map((h) => h.toLowerCase())).not.toContain('cache-control');
  });
});
