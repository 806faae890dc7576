import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { bodyBytes } from '../src/core/page.js';
import { route } from '../src/http/route.js';
import type { SiteContext } from '../src/http/route-types.js';
import { normalizeBaseUrl } from '../src/site/spec.js';
import { escapeUriPath, iriToUri, pathInfo } from '../src/core/url-path.js';
import { makeCity, testSpec } from './helpers.js';
import { requireTool } from './tool-check.js';

describe('request paths are read as Django reads them behind gunicorn', () => {
  it.each([
    ['plain', '/cities/', '/cities/'],
    ['percent-encoded ASCII', '/%63ities/', '/cities/'],
    ['UTF-8, uppercase hex', '/caf%C3%A9/cities', '/café/cities'],
    ['UTF-8, lowercase hex', '/caf%c3%a9/cities', '/café/cities'],
    ['an encoded slash is a slash', '/a%2Fb/cities', '/a/b/cities'],
    ['invalid UTF-8 is kept percent-encoded', '/%FF%FE/cities', '/%FF%FE/cities'],
    ['a truncated sequence before a valid one', '/%E2%82%E2%82%AC', '/%E2%82€'],
    ['an encoded surrogate is invalid', '/%ED%A0%80', '/%ED%A0%80'],
    ['a stray percent stays', '/100%/x%4', '/100%/x%4'],
  ])('%s: %s → %s', (_, raw, path) => {
    expect(pathInfo(raw)).toBe(path);
  });

  it.each([
    ['non-ASCII', '/café/cities', '/caf%C3%A9/cities'],
    ['characters Django escapes', '/a;b=c[1]|^', '/a%3Bb%3Dc%5B1%5D%7C%5E'],
    ['characters Django keeps', "/~a!$&'()*+,:@", "/~a!$&'()*+,:@"],
    ['a percent sign', '/%FF', '/%25FF'],
  ])('escape_uri_path, %s', (_, path, escaped) => {
    expect(escapeUriPath(path)).toBe(escaped);
  });

  it.each([
    ['ASCII that needs no escaping', 'page=2&ordering=-name_en', 'page=2&ordering=-name_en'],
    ['characters node lets through in a query', 'q="<>{}|\\^` ', 'q=%22%3C%3E%7B%7D%7C%5C%5E%60%20'],
    ['percent-escapes are kept', 'q=%2F%zz', 'q=%2F%zz'],
  ])('iri_to_uri, %s', (_, query, uri) => {
    expect(iriToUri(query)).toBe(uri);
  });
});

describe('a base URL whose path needs percent-encoding', () => {
  const index = new CityIndex(CityTable.fromCities(Array.from({ length: 15 }, (_, i) => makeCity(i + 1))), 'codepoint');
  const site = (baseUrl: string): SiteContext => ({
    index,
    spec: testSpec({ baseUrl: normalizeBaseUrl(baseUrl), count: 15, pageSizes: [10] }),
  });
  const answer = (baseUrl: string, target: string) => {
    const r = route({ method: 'GET', target }, site(baseUrl));
    if (r.kind !== 'answer') return { status: r.kind, location: undefined, next: undefined };
    const body = Buffer.from(r.body instanceof Uint8Array ? r.body : bodyBytes(r.body));
    return {
      status: r.status,
      location: r.headers.Location,
      next:
        r.headers['Content-Type'] === 'application/json'
          ? (JSON.parse(body.toString()) as { next: string | null }).next
          : undefined,
    };
  };

  it.each([
    [
      'non-ASCII, as printed by serve',
      'http://x/café',
      '/caf%C3%A9/cities/?page_size=5',
      200,
      'http://x/caf%C3%A9/cities/?page=2&page_size=5',
    ],
    [
      'non-ASCII, lowercase hex',
      'http://x/caf%c3%a9',
      '/caf%c3%a9/cities/?page_size=5',
      200,
      'http://x/caf%C3%A9/cities/?page=2&page_size=5',
    ],
    ['non-ASCII, precomputed page', 'http://x/caf%C3%A9', '/caf%C3%A9/cities/', 'static', undefined],
    [
      'an encoded slash in the base: both spellings of the path',
      'http://x/a%2Fb',
      '/a/b/cities/?page_size=5',
      200,
      'http://x/a/b/cities/?page=2&page_size=5',
    ],
    [
      'an encoded slash in the base, requested encoded',
      'http://x/a%2Fb',
      '/a%2Fb/cities/?page_size=5',
      200,
      'http://x/a/b/cities/?page=2&page_size=5',
    ],
    [
      'characters WHATWG keeps but Django escapes',
      'http://x/a;b=c',
      '/a;b=c/cities/?page_size=5',
      200,
      'http://x/a%3Bb%3Dc/cities/?page=2&page_size=5',
    ],
    ['another path is not the mount', 'http://x/caf%C3%A9', '/cafe/cities/', 404, undefined],
    ['invalid UTF-8 escapes are told apart', 'http://x/%FF', '/%FE/cities/', 404, undefined],
  ])('%s: %s, GET %s', (_, baseUrl, target, status, next) => {
    const got = answer(baseUrl, target);
    expect(got.status).toBe(status);
    if (next) expect(got.next).toBe(next);
  });

  it.each([
    ['non-ASCII mount', 'http://x/café', '/caf%c3%a9/cities?page=2', '/caf%C3%A9/cities/?page=2'],
    ['query characters Django escapes', 'http://x', '/cities?q="<>', '/cities/?q=%22%3C%3E'],
    ['a fragment is not part of the request', 'http://x', '/cities?page=2#top', '/cities/?page=2'],
  ])('the redirect to the slash: %s', (_, baseUrl, target, location) => {
    expect(answer(baseUrl, target)).toMatchObject({ status: 301, location });
  });
});

const DJANGO = '/usr/lib/python3/dist-packages/django';
// Django's own request object, given the environ gunicorn would build for each raw path and query.
const ORACLE = `
import io, json, sys
import django
from django.conf import settings
settings.configure(ALLOWED_HOSTS=['*'], ROOT_URLCONF=[], DEBUG=False)
django.setup()
from django.core.handlers.wsgi import WSGIRequest
from urllib.parse import unquote_to_bytes
out = []
for raw, query in json.load(sys.stdin):
    env = {'REQUEST_METHOD': 'GET', 'PATH_INFO': unquote_to_bytes(raw).decode('latin-1'), 'QUERY_STRING': query, 'SCRIPT_NAME': '',
           'SERVER_NAME': 'x', 'SERVER_PORT': '80', 'HTTP_HOST': 'x', 'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(b'')}
    request = WSGIRequest(env)
    out.append([request.path, request.get_full_path(force_append_slash=True), request.build_absolute_uri()])
print(json.dumps(out))
`;

describe.runIf(requireTool('Django', DJANGO, 'apt-get install -y python3-djangorestframework'))(
  'the same as Django itself (differential)',
  () => {
    it('path, redirect target and absolute URI for random raw paths and queries', () => {
      const piece = fc.oneof(
        fc.constantFrom(
          '/',
          'cities',
          'café',
          '%2F',
          '%2f',
          '%C3%A9',
          '%c3%A9',
          '%FF',
          '%E2%82',
          '%ED%A0%80',
          '%F0%9F%98%80',
          '%',
          '%4',
          ';',
          '=',
          '[',
          ']',
          '|',
          '^',
          '~',
          "'",
          '(',
          '!',
          '*',
          '@',
          ':',
          '$',
          '&',
          '+',
          ',',
          '"',
          '<',
          '{',
          '\\',
          '`',
          ' ',
        ),
        fc.string({ unit: fc.constantFrom(...'abcXYZ019-._'), maxLength: 4 }),
        fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, '0')}`),
      );
      const samples = fc.sample(
        fc.tuple(
          fc.array(piece, { maxLength: 8 }).map((p) => `/${p.join('')}`),
          fc.array(piece, { maxLength: 5 }).map((p) => p.join('').replace(/[ #]/g, '')),
        ),
        { numRuns: 800, seed: 42 },
      );
      const django = JSON.parse(
        execFileSync('/usr/bin/python3', ['-c', ORACLE], { input: JSON.stringify(samples) }).toString(),
      ) as [string, string, string][];
      samples.forEach(([raw, query], i) => {
        const path = pathInfo(raw);
        const full = `${escapeUriPath(path)}${path.endsWith('/') ? '' : '/'}${query ? `?${iriToUri(query)}` : ''}`;
        expect([path, full], `${raw} ? ${query}`).toEqual(django[i]!.slice(0, 2));
      });
    });

    it('links from a normalized base URL are what build_absolute_uri makes of a request to it', () => {
      const bases = [
        'http://x',
        'http://x/api/v1',
        'http://x/café',
        'http://x/caf%c3%a9/',
        'http://x/a%2Fb',
        'http://x/a;b=c[1]|^',
        "http://x/~a!$&'()*+,:@",
        'http://x/%FF%zz',
        'http://x/a%20b c',
      ];
      const requests = bases.map((base) => [`${new URL(base).pathname.replace(/\/+$/, '')}/cities/`, '']);
      const django = JSON.parse(
        execFileSync('/usr/bin/python3', ['-c', ORACLE], { input: JSON.stringify(requests) }).toString(),
      ) as [string, string, string][];
      bases.forEach((base, i) => expect(`${normalizeBaseUrl(base)}/cities/`, base).toBe(django[i]![2]));
    });
  },
);
