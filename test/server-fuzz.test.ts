import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer } from '../src/app/serve.js';
import { KIT, tempDir } from './helpers.js';
import { decodedBody, rawExchange, type RawExchange } from './raw-http.js';

// Hostile requests against a real server on port 0: whatever arrives, the answer is one of the
// statuses below (never a 500), the server keeps answering, and no byte of a file outside the
// site is ever sent. Raw sockets, so nothing is cleaned up by an HTTP client on the way.

const SECRET = `TOP-SECRET-${randomUUID()}`;
const EXPECTED = [200, 301, 304, 400, 403, 404, 405, 406, 408, 414, 431];
let root: string;
let cleanup: () => Promise<void>;
let server: RunningServer;
const logs: string[] = [];

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-fuzz-'));
  // Secrets next to the site directory and in its parent, under names a traversal would aim at.
  await mkdir(join(root, 'www'));
  for (const dir of [root, join(root, 'www')]) {
    for (const name of ['secret.json', 'cities.json', 'manifest.json', 'passwd'])
      await writeFile(join(dir, name), `{"secret":"${SECRET}"}`);
  }
  server = await serve({
    dir: join(root, 'www', 'site'),
    data: join(KIT, 'cities11.csv'),
    port: 0,
    log: (line) => logs.push(line),
  });
});
afterAll(async () => {
  await server.close();
  await cleanup();
});

const request = (method: string, target: string | Buffer, headers: Record<string, string> = {}) => {
  const head = Object.entries({ Host: 'localhost', Connection: 'close', ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return Buffer.concat([
    Buffer.from(`${method} `),
    typeof target === 'string' ? Buffer.from(target) : target,
    Buffer.from(` HTTP/1.1\r\n${head}\r\n`, 'latin1'),
  ]);
};

/** The rules every exchange obeys. */
function check(res: RawExchange, label: string): void {
  expect(res.status, `${label}: no answer`).not.toBeNull();
  expect(EXPECTED, `${label}: status ${res.status}`).toContain(res.status);
  expect(
    res.bytes.includes(SECRET) || decodedBody(res).includes(SECRET),
    `${label}: leaked a file outside the site`,
  ).toBe(false);
}

async function exchange(
  method: string,
  target: string | Buffer,
  headers?: Record<string, string>,
): Promise<RawExchange> {
  const res = await rawExchange(server.url, request(method, target, headers));
  check(res, `${method} ${String(target).slice(0, 80)}`);
  return res;
}

async function stillAnswers(): Promise<void> {
  const res = await rawExchange(server.url, request('GET', '/cities/?page=2'));
  expect([res.status, JSON.parse(res.body.toString()).count]).toEqual([200, 11]);
  expect(logs.filter((l) => l.startsWith('error'))).toEqual([]);
}

const at = (n: number) => '9'.repeat(n);
/** CR and LF would start header lines of their own (a Content-Length the test never sends a body for). */
const noLineBreaks = (s: string) => s.replace(/[\r\n]/g, '');

describe('crafted requests', () => {
  it.each([
    ['encoded ..', '/cities/%2e%2e/%2e%2e/secret.json', 404],
    ['encoded slashes', '/cities/..%2f..%2fsecret.json', 404],
    ['encoded backslashes', '/cities/..%5c..%5c..%5csecret.json', 404],
    ['double-encoded ..', '/cities/%252e%252e/%252e%252e/secret.json', 404],
    ['overlong UTF-8 dots', '/cities/%c0%ae%c0%ae/%c0%ae%c0%ae/secret.json', 404],
    ['plain ..', '/cities/../../secret.json', 404],
    ['.. above the root', '/../../passwd', 404],
    ['a site file by its path', '/cities/default/default/1.json', 404],
    ['the dataset copy', '/_cities-api/cities.json', 404],
    ['.. in page', '/cities/?page=..%2f..%2fsecret.json', 404],
    ['.. in ordering', '/cities/?ordering=../../secret.json', 200],
    ['.. in page_size', '/cities/?page_size=..%2fsecret', 200],
    ['%00 in the path', '/cities/%00', 404],
    ['%00 in a value', '/cities/?page=1%00', 404],
    ['invalid escapes', '/cities/?%zz=%&ordering=%', 200],
    ['a lone % as page', '/cities/?page=%', 404],
    ['invalid escape in the path', '/cities%zz/', 404],
    ['invalid UTF-8, escaped', '/cities/?ordering=%ff%fe&x=%c3', 200],
    ['1001 parameters', `/cities/?${'a&'.repeat(1001)}`, 400],
    ['8 KiB of ordering terms', `/cities/?ordering=${'-name_ar,'.repeat(900)}`, 200],
    ['a huge page_size', `/cities/?page_size=${at(8000)}`, 200],
    ['a huge page', `/cities/?page=${at(8000)}`, 404],
    ['spaces inside an ordering term', `/cities/?ordering=name_en${'%20'.repeat(2600)}x`, 200],
    ['absolute-form target', 'http://elsewhere.example/cities/?page=2', 200],
    ['asterisk target', '*', 404],
  ])('%s → %d', async (_, target, status) => {
    expect((await exchange('GET', target)).status).toBe(status);
  });

  it.each([
    ['raw invalid UTF-8 in the query', Buffer.from([...Buffer.from('/cities/?ordering='), 0xff, 0xfe])],
    ['raw invalid UTF-8 in the path', Buffer.from([...Buffer.from('/cit'), 0xc0, 0xae, ...Buffer.from('/')])],
    ['a raw NUL', Buffer.from('/cities/?a=\0')],
  ])('%s → 400 JSON', async (_, target) => {
    const res = await exchange('GET', target);
    expect([res.status, res.headers['content-type'], res.headers.allow, res.headers.vary]).toEqual([
      400,
      'application/json',
      'GET, POST, HEAD, OPTIONS',
      'Accept',
    ]);
    expect(JSON.parse(res.body.toString()).detail).toMatch(/^Malformed HTTP request/);
  });

  it.each([
    ['PUT', '/cities/', 405],
    ['DELETE', '/cities/', 405],
    ['PATCH', '/cities/', 405],
    ['TRACE', '/cities/', 405],
    ['PROPFIND', '/cities/', 405],
    ['M-SEARCH', '/cities/', 405],
    ['CONNECT', '/cities/', 405],
    ['CONNECT', 'example.com:443', 404],
    ['POST', '/cities/', 403],
    ['get', '/cities/', 400],
    ['BREW', '/cities/', 400],
    ['GET\t', '/cities/', 400],
  ])('%s %s → %d', async (method, target, status) => {
    const res = await exchange(method, target);
    expect(res.status).toBe(status);
    if (status === 405) expect(JSON.parse(res.body.toString())).toEqual({ detail: `Method "${method}" not allowed.` });
  });

  it.each([
    ['a 60 KB Accept', { Accept: 'text/plain;q=0.1,'.repeat(3500) }, 406],
    ['an indent padded with 50,000 spaces', { Accept: `application/json; indent=${' '.repeat(50_000)}2` }, 200],
    ['Accept-Encoding garbage', { 'Accept-Encoding': `${'x;q=,'.repeat(2000)}br` }, 200],
    ['If-None-Match garbage', { 'If-None-Match': `W/"${'"'.repeat(5000)}` }, 200],
    ['a Range', { Range: 'bytes=0-0,5-2,-1' }, 200],
    ['a garbage Range', { Range: 'lines=-' }, 200],
    ['1,900 headers', Object.fromEntries(Array.from({ length: 1900 }, (_, i) => [`X-H${i}`, 'v'])), 200],
    ['Expect: 100-continue on GET', { Expect: '100-continue' }, 200],
    ['chunked and Content-Length together', { 'Transfer-Encoding': 'chunked', 'Content-Length': '3' }, 400],
  ])('%s → %d', async (_, headers, status) => {
    expect((await exchange('GET', '/cities/', headers)).status).toBe(status);
  });

  it('an answer arrives fast even for the costliest allowed values', async () => {
    const started = Date.now();
    await exchange('GET', `/cities/?ordering=${'%20'.repeat(2700)}name_en${'%09'.repeat(2700)}`);
    await exchange('GET', '/cities/', { Accept: `application/json; indent=1${' '.repeat(60_000)}x` });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('the server still answers', stillAnswers);
});

describe('size limits', () => {
  const sized = (n: number) => `/cities/?x=${'a'.repeat(n - 11)}`;
  it.each([
    ['exactly 8 KiB of target → answered', sized(8192), 200],
    ['one byte more → 414', sized(8193), 414],
    ['10,000 parameters → 414', `/cities/?${'p=1&'.repeat(10_000)}`, 414],
    ['60 KB → 414, not node’s 431', sized(60_000), 414],
  ])('%s', async (_, target, status) => {
    const res = await exchange('GET', target);
    expect(res.status).toBe(status);
    if (status === 414) {
      expect(res.headers).toMatchObject({
        'content-type': 'application/json',
        allow: 'GET, POST, HEAD, OPTIONS',
        vary: 'Accept',
      });
      expect(JSON.parse(res.body.toString())).toEqual({
        detail: 'Request-URI too long: the path and query must fit in 8192 bytes.',
      });
    }
  });

  it.each([
    ['a target beyond the 64 KiB header limit', '/cities/?'.padEnd(70_000, 'a'), {}],
    ['headers beyond the 64 KiB header limit', '/cities/', { Cookie: 'c'.repeat(70_000) }],
    [
      'many headers beyond the limit',
      '/cities/',
      Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`X-Header-${i}`, 'value-value'])),
    ],
  ])('%s → 431 JSON, connection closed', async (_, target, headers) => {
    const res = await exchange('GET', target, headers);
    expect([res.status, res.headers['content-type'], res.headers.connection, res.closed]).toEqual([
      431,
      'application/json',
      'close',
      true,
    ]);
    expect(JSON.parse(res.body.toString()).detail).toMatch(/must fit in 65536 bytes/);
  });

  it('the server still answers', stillAnswers);
});

describe('random requests', () => {
  const segment = fc.oneof(
    fc.constantFrom(
      'cities',
      '',
      '.',
      '..',
      '%2e%2e',
      '%2E%2e%2f',
      '..%5c',
      '%252e%252e',
      '%c0%ae',
      '%00',
      '%',
      '%zz',
      '%ff%fe',
      '_cities-api',
      'secret.json',
      'passwd',
      'default',
      '1.json',
      'all.json',
      '~',
      ';x',
      '\\..',
    ),
    fc.string({ maxLength: 8 }).map(encodeURIComponent),
    fc.string({ unit: 'binary', maxLength: 6 }).map(noLineBreaks),
  );
  const query = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          'page=',
          'page_size=',
          'ordering=',
          'format=',
          'last',
          'api',
          'json',
          '-name_ar',
          'name_en,',
          '&',
          '=',
          '%',
          '%zz',
          '%ff',
          '%C3',
          '+',
          '..%2f',
          '%00',
          '٣',
          at(30),
          ' ',
        ),
        fc.string({ maxLength: 6 }),
        fc.string({ unit: 'binary', maxLength: 4 }).map((s) => encodeURIComponent(s.toWellFormed())),
      ),
      { maxLength: 12 },
    )
    .map((parts) => parts.join(''));
  const target = fc
    .tuple(fc.boolean(), fc.array(segment, { maxLength: 5 }), fc.option(query))
    .map(([api, segments, q]) => `${api ? '/cities/' : '/'}${segments.join('/')}${q === null ? '' : `?${q}`}`);
  const method = fc.constantFrom(
    'GET',
    'GET',
    'GET',
    'HEAD',
    'OPTIONS',
    'POST',
    'PUT',
    'DELETE',
    'PATCH',
    'TRACE',
    'CONNECT',
    'get',
    'Get',
    'FOO',
    '',
  );
  const headerValue = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary-ascii', maxLength: 40 }).map(noLineBreaks),
    fc.constantFrom('*/*', 'text/html', 'application/json; indent=4', 'gzip, br', 'W/"x"', 'bytes=0-9'),
  );
  const headers = fc.dictionary(
    fc.constantFrom(
      'Accept',
      'Accept-Encoding',
      'If-None-Match',
      'Range',
      'Origin',
      'Access-Control-Request-Method',
      'Content-Type',
      'Authorization',
    ),
    headerValue,
    { maxKeys: 4 },
  );

  it('any method, path, query and headers get an expected status, and nothing from outside the site', async () => {
    await fc.assert(
      fc.asyncProperty(method, target, headers, fc.boolean(), async (m, t, h, rawUtf8) => {
        const res = await rawExchange(server.url, request(m, rawUtf8 ? Buffer.from(t) : Buffer.from(t, 'latin1'), h));
        check(res, `${m} ${t} ${JSON.stringify(h)}`);
      }),
      { numRuns: 400 },
    );
  });

  it('the server still answers', stillAnswers);
});
