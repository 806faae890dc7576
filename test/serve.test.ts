import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { serve, type RunningServer } from '../src/app/serve.js';
import { KIT, kitAnswers, tempDir } from './helpers.js';
import { rawRequest, SMALL_SITE, startCli } from './serve-helpers.js';
import { whenReady } from './started-process.js';

const BASE = 'http://api.example.com';
let root: string;
let cleanup: () => Promise<void>;
let server: RunningServer;
const api = (query = '') => `${server.url}/cities/${query}`;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-serve-'));
  await copyFile(join(KIT, 'cities48.csv'), join(root, 'cities.csv'));
  server = await serve({
    dir: join(root, 'site'),
    data: join(root, 'cities.csv'),
    baseUrl: BASE,
    collation: 'codepoint',
    port: 0,
  });
});
afterAll(async () => {
  await server.close();
  await cleanup();
});

const REFERENCE = { allow: 'GET, POST, HEAD, OPTIONS', vary: 'Accept', 'access-control-allow-origin': '*' };

describe('every answer carries the reference headers', () => {
  it.each([
    ['a precomputed page', 'GET', '?page=2', 200, 'application/json'],
    ['a live page', 'GET', '?page_size=7&page=3', 200, 'application/json'],
    ['an invalid page', 'GET', '?page=99', 404, 'application/json'],
    ['an unknown format', 'GET', '?format=xml', 404, 'application/json'],
    ['an Accept it cannot meet', 'GET', '?format=json', 200, 'application/json'],
    ['HEAD of a precomputed page', 'HEAD', '?page=2', 200, 'application/json'],
    ['HEAD of a live page', 'HEAD', '?ordering=id', 200, 'application/json'],
    ['OPTIONS', 'OPTIONS', '', 200, 'application/json'],
    ['a method not allowed', 'PUT', '', 405, 'application/json'],
    ['POST on a read-only server', 'POST', '', 403, 'application/json'],
    ['the browsable page', 'GET', '?format=api', 200, 'text/html; charset=utf-8'],
  ])('%s', async (_, method, query, status, type) => {
    const res = await rawRequest(api(query), { method });
    expect(res.status).toBe(status);
    expect(res.headers).toMatchObject({ ...REFERENCE, 'content-type': type });
    expect(res.headers['cache-control']).toBeUndefined();
  });
});

describe('HTTP semantics', () => {
  it.each([['?page=2'], ['?page_size=7&page=3']])('HEAD %s has GET’s headers and no body', async (query) => {
    const get = await rawRequest(api(query));
    const head = await rawRequest(api(query), { method: 'HEAD' });
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(String(get.body.length));
    expect(head.headers.etag).toBe(get.headers.etag);
  });

  it('OPTIONS describes the POST fields like the reference', async () => {
    const want = (await kitAnswers('cities48')).find((a) => a.method === 'OPTIONS')!.json as {
      actions: { POST: Record<string, object> };
    };
    const got = JSON.parse((await rawRequest(api(), { method: 'OPTIONS' })).body.toString()) as typeof want & {
      name: string;
    };
    expect(got.name).toBe('City List');
    for (const [field, info] of Object.entries(want.actions.POST)) expect(got.actions.POST[field]).toMatchObject(info);
    expect(Object.keys(got.actions.POST)).toEqual(Object.keys(want.actions.POST));
  });

  it('a CORS preflight is answered by OPTIONS', async () => {
    const res = await rawRequest(api(), {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type',
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST, HEAD, OPTIONS',
      'access-control-allow-headers': 'authorization,content-type',
    });
  });

  it('/cities redirects permanently to /cities/, keeping the query', async () => {
    const res = await rawRequest(`${server.url}/cities?page=2&ordering=-name_ar`);
    expect([res.status, res.headers.location, res.headers['content-type']]).toEqual([
      301,
      '/cities/?page=2&ordering=-name_ar',
      'text/html; charset=utf-8',
    ]);
  });

  it.each([['PUT'], ['PATCH'], ['DELETE'], ['TRACE']])('%s → 405 naming the method', async (method) => {
    const res = await rawRequest(api(), { method });
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([405, { detail: `Method "${method}" not allowed.` }]);
  });

  it('a conditional GET with the ETag of a precomputed page → 304', async () => {
    const first = await rawRequest(api('?ordering=name_en&page=2'));
    expect(first.headers.etag).toMatch(/^W\/"/);
    const again = await rawRequest(api('?ordering=name_en&page=2'), {
      headers: { 'If-None-Match': first.headers.etag as string },
    });
    expect([again.status, again.body.length, again.headers.vary]).toEqual([304, 0, 'Accept']);
  });

  it.each([
    ['gzip', 'gzip', gunzipSync],
    ['brotli', 'br', brotliDecompressSync],
    ['brotli preferred over gzip', 'gzip, deflate, br', brotliDecompressSync],
  ])('%s from the precompressed files', async (_, accept, decode) => {
    const plain = await rawRequest(api('?page=3'));
    const packed = await rawRequest(api('?page=3'), { headers: { 'Accept-Encoding': accept } });
    expect(packed.headers['content-encoding']).toBe(accept.includes('br') ? 'br' : 'gzip');
    expect(decode(packed.body).equals(plain.body)).toBe(true);
    expect(packed.headers.vary).toBe('Accept');
  });

  it('no Accept-Encoding → identity', async () => {
    expect((await rawRequest(api('?page=3'))).headers['content-encoding']).toBeUndefined();
  });

  it('a Range request is answered whole, as the reference does', async () => {
    const res = await rawRequest(api('?page=3'), { headers: { Range: 'bytes=0-9' } });
    expect([res.status, JSON.parse(res.body.toString()).count]).toEqual([200, 48]);
  });
});

describe('answers', () => {
  it.each([
    ['page_size=7&page=3'],
    ['ordering=name_en,-name_ar&page=2'],
    ['ordering=id&foo=a%20b'],
    ['page=last'],
    ['format=json&page=2'],
  ])('live ?%s equals the page function', async (query) => {
    const index = new CityIndex(await readDataset(join(KIT, 'cities48.csv')), 'codepoint');
    const res = await rawRequest(api(`?${query}`));
    expect(res.body.equals(bodyBytes(answerListing(index, parseQuery(query), BASE).body))).toBe(true);
  });

  it('Accept: application/json; indent=4 pretty-prints', async () => {
    const res = await rawRequest(api('?page=5'), { headers: { Accept: 'application/json; indent=4' } });
    expect(res.body.toString()).toMatch(/^\{\n {4}"count": 48,\n {4}"next": null,/);
  });

  it('406 when the Accept header cannot be met', async () => {
    const res = await rawRequest(api(), { headers: { Accept: 'application/xml' } });
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([
      406,
      { detail: 'Could not satisfy the request Accept header.' },
    ]);
  });

  it('a browser gets the browsable page with links', async () => {
    const res = await rawRequest(api('?page=2'), { headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body.toString()).toContain(`<a href="${BASE}/cities/?page=3" rel="nofollow">`);
  });

  it('other paths → 404 page, too many parameters → 400, as Django answers', async () => {
    expect((await rawRequest(`${server.url}/nope`)).status).toBe(404);
    expect((await rawRequest(`${server.url}/_cities-api/manifest.json`)).status).toBe(404);
    expect((await rawRequest(api(`?${'a=1&'.repeat(1000)}`))).status).toBe(400);
  });
});

describe('starting', () => {
  it('a busy port is a clear error', async () => {
    const port = Number(new URL(server.url).port);
    await expect(serve({ dir: join(root, 'site'), port })).rejects.toThrow(
      `port ${port} on 127.0.0.1 is already in use`,
    );
  });

  it('serves an existing build without a dataset, mounted at its base URL path', async () => {
    const other = await serve({
      dir: join(root, 'prefixed'),
      data: join(KIT, 'prefixed30.csv'),
      baseUrl: 'https://cities.example.org/api/v1',
      port: 0,
    });
    await other.close();
    const again = await serve({ dir: join(root, 'prefixed'), port: 0 });
    try {
      expect(again.apiUrl).toMatch(/\/api\/v1\/cities\/$/);
      const res = await rawRequest(`${again.apiUrl}?page=2`);
      expect(JSON.parse(res.body.toString()).previous).toBe('https://cities.example.org/api/v1/cities/');
      expect((await rawRequest(`${again.url}/cities/`)).status).toBe(404);
    } finally {
      await again.close();
    }
  });

  it('refuses a base URL the existing build was not made for', async () => {
    await expect(serve({ dir: join(root, 'prefixed'), baseUrl: 'https://elsewhere.example', port: 0 })).rejects.toThrow(
      /was built for https:\/\/cities\.example\.org\/api\/v1/,
    );
  });

  it('a directory without a site is a clear error', async () => {
    await expect(serve({ dir: join(root, 'empty-dir'), port: 0 })).rejects.toThrow(/holds no cities-api site/);
  });

  it('links use the server’s own URL when no base URL is given', async () => {
    const own = await serve({ dir: join(root, 'own'), data: join(KIT, 'cities11.csv'), port: 0 });
    try {
      expect(JSON.parse((await rawRequest(`${own.apiUrl}`)).body.toString()).next).toBe(`${own.url}/cities/?page=2`);
    } finally {
      await own.close();
    }
  });
});

describe('--watch', () => {
  it('answers from the new data once the dataset file changes', async () => {
    const file = join(root, 'watched.csv');
    await copyFile(join(KIT, 'cities11.csv'), file);
    const logs: string[] = [];
    const watched = await serve({
      dir: join(root, 'watched'),
      data: file,
      port: 0,
      watch: true,
      log: (l) => logs.push(l),
    });
    try {
      await copyFile(join(KIT, 'prefixed30.csv'), file);
      let count = 11;
      const rebuilt = () => /watched\.csv changed: rebuilt, now 30 cities/.test(logs.at(-1) ?? '');
      // The new site is answered a moment before the rebuild's line is logged: wait for both.
      for (let i = 0; i < 100 && (count !== 30 || !rebuilt()); i++) {
        await new Promise((r) => setTimeout(r, 100));
        count = JSON.parse((await rawRequest(watched.apiUrl)).body.toString()).count;
      }
      expect(logs.at(-1)).toMatch(/watched\.csv changed: rebuilt, now 30 cities/);
      expect(count).toBe(30);
    } finally {
      await watched.close();
    }
  });

  // A save that was not used, then one back to the dataset served: no rebuild is needed, but the
  // user is told the dataset is fine again (else "was not used" stayed the last word).
  it.each([
    [
      'fixed back to the file served: said to be served as before',
      'cities11.csv',
      /watched-back\.csv changed: valid, and the same as the dataset served; serving it as before \(11 cities\)$/,
      11,
    ],
    [
      'fixed to another valid file: rebuilt as at any change',
      'prefixed30.csv',
      /watched-other\.csv changed: rebuilt, now 30 cities$/,
      30,
    ],
  ])('serve --watch, an invalid save, then %s', async (label, fixed, last, count) => {
    const file = join(root, label.startsWith('fixed back') ? 'watched-back.csv' : 'watched-other.csv');
    await copyFile(join(KIT, 'cities11.csv'), file);
    const served = await startCli([
      join(root, `${file}.site`),
      '--data',
      file,
      '--port',
      '0',
      '--watch',
      ...SMALL_SITE,
    ]);
    try {
      const good = await readFile(file, 'utf8');
      await writeFile(file, `${good}1,broken\n`);
      const following = { ...served, name: 'serve' };
      await whenReady(
        following,
        () => /changed but was not used: invalid dataset/.test(served.output()) || undefined,
        50,
      );
      await copyFile(join(KIT, fixed), file);
      const lastLine = () => served.output().trimEnd().split('\n').at(-1) ?? '';
      // Bounded (10 s), so that a line never said fails here rather than at the test's timeout.
      for (let i = 0; i < 100 && !last.test(lastLine()); i++) await new Promise((r) => setTimeout(r, 100));
      expect(lastLine()).toMatch(last);
      const answered = await rawRequest(`${served.url}/cities/`);
      expect(JSON.parse(answered.body.toString()).count).toBe(count);
    } finally {
      await served.stop();
    }
  });
});
