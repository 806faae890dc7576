import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { rawRequest, ROOT, startCli } from './serve-helpers.js';

// The preview server as users run it (the real CLI): a line per request (--quiet silences it;
// what a line says of each kind of answer: request-log.test.ts), `/` linking the API and
// `/openapi.json` served from the site, both off with --no-preview-pages (then Django's 404, as
// the reference).

let dir: string;
let cleanup: () => Promise<void>;
let preview: Awaited<ReturnType<typeof startCli>>;
let quiet: Awaited<ReturnType<typeof startCli>>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('cities-preview-'));
  const data = join(ROOT, 'data/cities.csv');
  preview = await startCli([
    join(dir, 'site'),
    '--data',
    data,
    '--port',
    '0',
    '--orderings',
    'default',
    '--page-sizes',
    '20',
  ]);
  quiet = await startCli([join(dir, 'site'), '--port', '0', '--quiet', '--no-preview-pages']);
}, 120_000);
afterAll(async () => {
  await preview?.stop();
  await quiet?.stop();
  await cleanup();
});

/** The lines the server printed after `before` characters of its output, once `count` are there. */
async function linesAfter(server: typeof preview, before: number, count: number): Promise<string[]> {
  for (let i = 0; i < 200 && server.output().slice(before).split('\n').filter(Boolean).length < count; i++)
    await new Promise((r) => setTimeout(r, 20));
  return server.output().slice(before).split('\n').filter(Boolean);
}

describe('a line per request: the Common Log Format, then ms', () => {
  const CLF = String.raw`^127\.0\.0\.1 - - \[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] `;
  const line = (request: string, status: number, size: string) =>
    new RegExp(`${CLF}"${request} HTTP/1\\.1" ${status} ${size} \\d+(\\.\\d)?ms$`);
  it.each([
    ['a page', 'GET', '/cities/?page=2', line(String.raw`GET /cities/\?page=2`, 200, '\\d{4,}')],
    [
      'a page computed live',
      'GET',
      '/cities/?page_size=7&ordering=-name_fr',
      line(String.raw`GET /cities/\?page_size=7&ordering=-name_fr`, 200, '\\d{4,}'),
    ],
    ['HEAD: no body, size -', 'HEAD', '/cities/', line('HEAD /cities/', 200, '-')],
    ['OPTIONS', 'OPTIONS', '/cities/', line('OPTIONS /cities/', 200, '\\d+')],
    ['a 404', 'GET', '/nowhere', line('GET /nowhere', 404, '\\d+')],
    ['a 400', 'GET', '/cities/?page=abc', line(String.raw`GET /cities/\?page=abc`, 404, '\\d+')],
    ['the index page', 'GET', '/', line('GET /', 200, '\\d+')],
  ])('%s', async (_, method, target, expected) => {
    const before = preview.output().length;
    const res = await rawRequest(`${preview.url}${target}`, { method });
    const [logged] = await linesAfter(preview, before, 1);
    expect(logged).toMatch(expected);
    // The size is the body's bytes, as the client received them.
    if (method === 'GET') expect(logged!.split('" ')[1]!.split(' ')[1]).toBe(String(res.body.length));
  });

  it('--quiet: none', async () => {
    const before = quiet.output().length;
    await rawRequest(`${quiet.url}/cities/?page=2`);
    await new Promise((r) => setTimeout(r, 200));
    expect(quiet.output().slice(before)).toBe('');
  });
});

describe('the preview pages', () => {
  it('/ links the API (JSON too) and openapi.json', async () => {
    const res = await rawRequest(`${preview.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = res.body.toString();
    expect(html).toContain('<a href="/cities/">/cities/</a>');
    expect(html).toContain('<a href="/cities/?format=json">JSON</a>');
    expect(html).toContain('<a href="/openapi.json">/openapi.json</a>');
    expect(html).toContain('48 cities');
  });

  it("/openapi.json is the site's own file", async () => {
    const res = await rawRequest(`${preview.url}/openapi.json`);
    expect([res.status, res.headers['content-type']]).toEqual([200, 'application/json']);
    expect(res.body.equals(await readFile(join(dir, 'site/openapi.json')))).toBe(true);
    const head = await rawRequest(`${preview.url}/openapi.json`, { method: 'HEAD' });
    expect([head.status, head.body.length, head.headers['content-length']]).toEqual([200, 0, String(res.body.length)]);
  });

  it.each(['/', '/openapi.json'])("--no-preview-pages: %s is Django's 404, as /nowhere is", async (path) => {
    const [res, nowhere] = await Promise.all([rawRequest(`${quiet.url}${path}`), rawRequest(`${quiet.url}/nowhere`)]);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe(nowhere.headers['content-type']);
    expect(res.body.toString()).toBe(nowhere.body.toString().replace('/nowhere', path));
  });

  it.each([
    ['/?x=1', 200, 'text/html; charset=utf-8'],
    ['/openapi.json?v=2', 200, 'application/json'],
    ['/openapi.jsonx', 404, undefined],
    ['//', 404, undefined],
    ['/openapi.json/', 404, undefined],
  ])('%s: a preview page only where the path (before "?") is one', async (target, status, type) => {
    const res = await rawRequest(`${preview.url}${target}`);
    expect(res.status).toBe(status);
    if (type) expect(res.headers['content-type']).toBe(type);
  });

  it("other methods on / are the API handler's, as without preview pages", async () => {
    const [res, strict] = await Promise.all([
      rawRequest(`${preview.url}/`, { method: 'POST' }),
      rawRequest(`${quiet.url}/`, { method: 'POST' }),
    ]);
    expect(res.status).toBe(strict.status);
  });
});
