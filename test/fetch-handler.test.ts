import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { detailJson } from '../src/core/json-text.js';
import { negotiate } from '../src/core/negotiate.js';
import { bodyBytes } from '../src/core/page.js';
import { createFetchHandler, type FetchHandlerOptions } from '../src/http/fetch-handler.js';
import { embeddedSite } from '../src/http/embedded-site.js';
import { READ_ONLY_DETAIL, route } from '../src/http/route.js';
import type { SiteContext } from '../src/http/route-types.js';
import { render } from '../src/http/render.js';
import { DOT_SEGMENT_TARGETS, makeCity, testSpec } from './helpers.js';

// createFetchHandler against route(), the function `cities-api serve` answers with: for each kind
// of request, the Response must carry route()'s status, headers and bytes (a static route's bytes
// being the page function's, or the platform's file when it has one).

const cities = (n: number) =>
  Array.from({ length: n }, (_, i) => makeCity(i + 1, { name: `N${i % 7}é`, top: i % 5 === 0 }));
const siteOf = (n: number, baseUrl = 'http://api.example.com'): SiteContext => ({
  index: new CityIndex(CityTable.fromCities(cities(n)), 'codepoint'),
  spec: testSpec({ baseUrl, count: n, pageSizes: [10, 20] }),
});
const SMALL = siteOf(23);
const LARGE = siteOf(1203);
const ORIGIN = 'https://edge.example.net';

const handlerFor = (site: SiteContext, extra: Partial<FetchHandlerOptions> = {}) =>
  createFetchHandler({ site: { spec: () => site.spec, index: () => site.index }, ...extra });

/** What serve sends for the request: route()'s answer, a static route computed as serve does when its file is absent. */
function expected(site: SiteContext, method: string, target: string, headers: Record<string, string>) {
  const req = {
    method,
    target,
    accept: headers.accept,
    preflightHeaders:
      method === 'OPTIONS' && 'access-control-request-method' in headers
        ? (headers['access-control-request-headers'] ?? '')
        : undefined,
  };
  let r = route(req, site);
  if (r.kind === 'static') r = route(req, { ...site, useFiles: false });
  if (r.kind === 'create') r = render(req, r.negotiation, 403, detailJson(READ_ONLY_DETAIL));
  if (r.kind !== 'answer') throw new Error('unreachable');
  const bytes = bodyBytes(r.body instanceof Uint8Array ? [r.body] : r.body);
  return {
    status: r.status,
    headers: { ...r.headers, 'Content-Length': String(bytes.length) },
    body: method === 'HEAD' ? '' : Buffer.from(bytes).toString(),
  };
}

async function sent(response: Response) {
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}

const lower = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

describe('createFetchHandler answers as route() decides', () => {
  it.each([
    ['a precomputed page, no platform files: computed, equal to its file', SMALL, 'GET', '/cities/?page=2', {}],
    ['a live page size', SMALL, 'GET', '/cities/?page_size=7&page=3', {}],
    ['a multi-field ordering', SMALL, 'GET', '/cities/?ordering=name_en,-name_ar&page=2', {}],
    ['an invalid page', SMALL, 'GET', '/cities/?page=9', {}],
    ['HEAD: no body, the length of the GET', SMALL, 'HEAD', '/cities/?page=2&ordering=-name_ar', {}],
    ['OPTIONS', SMALL, 'OPTIONS', '/cities/', {}],
    [
      'a CORS preflight',
      SMALL,
      'OPTIONS',
      '/cities/',
      { 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-a' },
    ],
    ["POST: serve's read-only 403", SMALL, 'POST', '/cities/', { 'content-type': 'application/json' }],
    ['POST from a browser: the 403 as the browsable page', SMALL, 'POST', '/cities/', { accept: 'text/html' }],
    ['an unknown method', SMALL, 'PATCH', '/cities/', {}],
    ['no trailing slash: 301 with the query', SMALL, 'GET', '/cities?page=2&x=%C3%A9', {}],
    ["another path: Django's 404 page", SMALL, 'GET', '/cities/1/', {}],
    ['an unmet Accept: 406', SMALL, 'GET', '/cities/', { accept: 'image/png' }],
    ['an unknown format: 404', SMALL, 'GET', '/cities/?format=csv', {}],
    ['the browsable page', SMALL, 'GET', '/cities/?format=api&ordering=name_en', {}],
    ['indented JSON', SMALL, 'GET', '/cities/?page=2', { accept: 'application/json; indent=4' }],
    ['a target over 8 KiB: 414', SMALL, 'GET', `/cities/?x=${'a'.repeat(8200)}`, {}],
    ["1001 query fields: Django's 400 page", SMALL, 'GET', `/cities/?${'&'.repeat(1000)}`, {}],
    ['percent-encoded path and query', SMALL, 'GET', '/%63ities/?ordering=name%5Fen&page=%32', {}],
    ['a mounted endpoint', siteOf(23, 'https://x.example.org/api/v1'), 'GET', '/api/v1/cities/?page=3', {}],
    ['the mounted endpoint without its mount: 404', siteOf(23, 'https://x.example.org/api/v1'), 'GET', '/cities/', {}],
    ['a page of 1203 cities: streamed in parts', LARGE, 'GET', '/cities/?page_size=1203', {}],
    ['a page of 1203 cities, browsable: streamed in parts', LARGE, 'GET', '/cities/?page_size=1203&format=api', {}],
    ['HEAD of a page in parts: its length, no body', LARGE, 'HEAD', '/cities/?page_size=1203&ordering=-name_fr', {}],
  ] as const)('%s', async (_, site, method, target, headers) => {
    const response = await handlerFor(site)(
      new Request(ORIGIN + target, { method, headers, ...(method === 'POST' ? { body: '{}' } : {}) }),
    );
    const want = expected(site, method, target, headers);
    const got = await sent(response);
    expect({ ...got, headers: got.headers }).toEqual({ ...want, headers: lower(want.headers) });
  });
});

// A Request made in Node (as Lambda's adapter makes one) has its dot segments resolved; Deno's
// request.url keeps the client's text, and Lambda's event its raw path: the handler reads those.
describe("dot segments and double slashes, kept as sent: serve's 404, as the reference's", () => {
  it.each(
    DOT_SEGMENT_TARGETS.flatMap((target) => [
      ['a URL kept as sent (Deno)', target] as const,
      ['the target given apart (Lambda)', target] as const,
    ]),
  )('%s: %s', async (how, target) => {
    const request = new Request(ORIGIN + target);
    if (how.endsWith('(Deno)')) Object.defineProperty(request, 'url', { value: ORIGIN + target });
    const response = await handlerFor(SMALL)(request, undefined, how.endsWith('(Lambda)') ? target : undefined);
    const want = expected(SMALL, 'GET', target, {});
    expect(want.status).toBe(404);
    const got = await sent(response);
    expect(got).toEqual({ ...want, headers: lower(want.headers) });
  });
});

describe("precomputed answers from the platform's files", () => {
  const FILE = Buffer.from('{"from":"the file"}');
  const files =
    (status: number, seen: string[] = []) =>
    async (path: string, request: Request) => {
      seen.push(`${path} ${request.headers.get('if-none-match') ?? ''}`);
      return new Response(status === 200 ? FILE : null, {
        status,
        headers: { ETag: '"e1"', 'Content-Type': 'application/octet-stream', Vary: 'Accept-Encoding' },
      });
    };

  it.each([
    ['a covered GET: the file, with the API headers and its ETag', 'GET', {}, 200, 200, FILE.toString()],
    ['a covered HEAD: no body', 'HEAD', {}, 200, 200, ''],
    ['a conditional GET the file matches: 304 passed on', 'GET', { 'if-none-match': '"e1"' }, 304, 304, ''],
  ] as const)('%s', async (_, method, headers, fileStatus, status, body) => {
    const seen: string[] = [];
    const response = await handlerFor(SMALL, { file: files(fileStatus, seen) })(
      new Request(`${ORIGIN}/cities/?page=2`, { method, headers }),
    );
    expect(seen).toEqual([`cities/default/default/2.json ${'if-none-match' in headers ? '"e1"' : ''}`]);
    expect(await sent(response)).toMatchObject({
      status,
      body,
      headers: { 'content-type': 'application/json', vary: 'Accept', allow: 'GET, POST, HEAD, OPTIONS', etag: '"e1"' },
    });
  });

  it('a file the platform lacks: the answer computed, as serve does', async () => {
    const response = await handlerFor(SMALL, { file: files(404) })(new Request(`${ORIGIN}/cities/?page=2`));
    expect(await sent(response)).toEqual({
      ...expected(SMALL, 'GET', '/cities/?page=2', {}),
      headers: lower(expected(SMALL, 'GET', '/cities/?page=2', {}).headers),
    });
  });

  it('an uncovered query never asks for a file', async () => {
    const seen: string[] = [];
    await handlerFor(SMALL, { file: files(200, seen) })(new Request(`${ORIGIN}/cities/?page_size=7`));
    expect(seen).toEqual([]);
  });
});

describe('failures and data sources', () => {
  it('an exception: 500 with a JSON detail, reported', async () => {
    const errors: unknown[] = [];
    const handler = createFetchHandler({
      site: {
        spec: () => {
          throw new Error('boom');
        },
        index: () => SMALL.index,
      },
      onError: (e) => errors.push(e),
    });
    expect(await sent(await handler(new Request(`${ORIGIN}/cities/`)))).toMatchObject({
      status: 500,
      body: '{"detail":"A server error occurred."}',
    });
    expect(errors).toHaveLength(1);
  });

  it('an embedded dataset is indexed once, at the first request', async () => {
    const table = CityTable.fromCities(cities(23));
    const dataset = Buffer.concat([...table.datasetParts()]).toString();
    const site = embeddedSite({ settings: { ...testSpec({ count: 23, pageSizes: [10, 20] }) }, dataset });
    const first = await site.index([]);
    expect(await site.index([['page', '2']])).toBe(first);
    expect(await site.spec()).toBe(await site.spec());
    const response = await createFetchHandler({ site })(new Request(`${ORIGIN}/cities/?ordering=-name_en&page=2`));
    expect((await sent(response)).body).toBe(expected(SMALL, 'GET', '/cities/?ordering=-name_en&page=2', {}).body);
  });

  it('the negotiation of a POST is the one route() made (406 before 403)', async () => {
    const response = await handlerFor(SMALL)(
      new Request(`${ORIGIN}/cities/`, { method: 'POST', body: '{}', headers: { accept: 'image/png' } }),
    );
    expect(response.status).toBe('status' in negotiate(undefined, 'image/png') ? 406 : 403);
  });
});

describe('openapi: /openapi.json answered with the site file the platform reads (Deno, Lambda)', () => {
  const document = '{"openapi": "3.1.0"}\n';
  const openapi = async () => new TextEncoder().encode(document);
  it.each([
    ['GET', 'GET', '/openapi.json', true, 200, document],
    ['GET with a query', 'GET', '/openapi.json?v=2', true, 200, document],
    ['HEAD: its length, no body', 'HEAD', '/openapi.json', true, 200, ''],
    ["POST: the API's answer to another path (404)", 'POST', '/openapi.json', true, 404, null],
    ["a longer path: Django's 404", 'GET', '/openapi.jsonx', true, 404, null],
    ["without the option: Django's 404, as the reference", 'GET', '/openapi.json', false, 404, null],
  ] as const)('%s', async (_, method, target, given, status, body) => {
    const options = given ? { openapi } : {};
    const got = await sent(await handlerFor(SMALL, options)(new Request(ORIGIN + target, { method })));
    expect(got.status).toBe(status);
    if (body === null)
      return expect(got).toEqual(await sent(await handlerFor(SMALL)(new Request(ORIGIN + target, { method }))));
    expect(got.body).toBe(body);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(document)));
  });
});
