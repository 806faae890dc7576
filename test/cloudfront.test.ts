import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import vm from 'node:vm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { serve, type RunningServer } from '../src/app/serve.js';
import { CitiesApiError } from '../src/core/errors.js';
import { negotiate } from '../src/core/negotiate.js';
import { parseQuery } from '../src/core/query-string.js';
import { ROUTES } from '../src/core/route-table.js';
import { CLOUDFRONT_FUNCTION_MAX_BYTES, CLOUDFRONT_IMPORT, cloudFrontFunction } from '../src/hosts/cloudfront.js';
import { liveOrigin } from '../src/hosts/cloudfront-origin.js';
import { notPrecomputedJson } from '../src/hosts/not-precomputed.js';
import { fileKeyFor } from '../src/site/layout.js';
import { specOf } from '../src/site/manifest.js';
import { readManifest } from '../src/store/manifest-file.js';
import type { SiteSpec } from '../src/site/spec.js';
import { KIT, KIT_DATASETS, kitAnswers, tempDir, testSpec, type KitAnswer } from './helpers.js';
import { rawRequest } from './serve-helpers.js';
import { kitSite } from './edge-helpers.js';

// The generated function runs in a fresh V8 context (no Node globals, a recording stand-in for
// the `cloudfront` module) on CloudFront's event shape. A distribution is simulated around it: an
// object key is looked up in the site directory (S3); a missing object fails over to the live
// origin with the request as the function left it (the origin group); a request sent live goes
// to a real `cities-api serve`. Every kit answer must come out as the reference recorded it, also
// when the function was generated for another dataset or other page sizes than the site's.

const LIVE_URL = 'https://live.example.org';
const LIVE_ORIGIN = {
  domainName: 'live.example.org',
  customOriginConfig: { port: 443, protocol: 'https', sslProtocols: ['TLSv1.2'] },
  originAccessControlConfig: { enabled: false },
};

type QueryField = { value: string; multiValue?: { value: string }[] };
interface CfRequest {
  method: string;
  uri: string;
  querystring: Record<string, QueryField>;
  headers: Record<string, { value: string }>;
  cookies: Record<string, never>;
  rawQueryString?: () => string | undefined;
}
type Outcome =
  | { kind: 'object'; key: string }
  | { kind: 'live' }
  | { kind: 'untouched' }
  | { kind: 'answer'; status: number; headers: Record<string, string>; body: string | undefined };

interface LoadedFunction {
  readonly handler: (event: unknown) => unknown;
  readonly origins: unknown[];
}

function loadFunction(code: string): LoadedFunction {
  const origins: unknown[] = [];
  const lines = code.split('\n');
  const imports = lines[0] === CLOUDFRONT_IMPORT;
  // The runtime's one documented module import, as a context global.
  const script = imports ? ['var cf = __cloudfront;', ...lines.slice(1)].join('\n') : code;
  const globals = imports
    ? { __cloudfront: { updateRequestOrigin: (params: unknown) => origins.push(JSON.parse(JSON.stringify(params))) } }
    : {};
  const context = vm.createContext(globals);
  vm.runInContext(script, context, { filename: 'cloudfront-function.js' });
  return { handler: context.handler as (event: unknown) => unknown, origins };
}

/** The `querystring` object CloudFront builds: a field per name, values as sent (not decoded), repeats in multiValue. */
function cloudFrontQuerystring(raw: string): Record<string, QueryField> {
  const byName = new Map<string, string[]>();
  for (const field of raw.split('&')) {
    if (!field) continue;
    const eq = field.indexOf('=');
    const name = eq < 0 ? field : field.slice(0, eq);
    byName.set(name, [...(byName.get(name) ?? []), eq < 0 ? '' : field.slice(eq + 1)]);
  }
  return Object.fromEntries(
    [...byName].map(([name, values]) => [
      name,
      values.length > 1 ? { value: values[0]!, multiValue: values.map((value) => ({ value })) } : { value: values[0]! },
    ]),
  );
}

interface Call {
  method?: string;
  uri: string;
  /** The query without `?`; undefined when the request has no `?`. */
  raw?: string | undefined;
  accept?: string;
  /** False for test events, which carry only the parsed querystring object. */
  withRaw?: boolean;
}

function run(fn: LoadedFunction, { method = 'GET', uri, raw, accept, withRaw = true }: Call): Outcome {
  const request: CfRequest = {
    method,
    uri,
    querystring: cloudFrontQuerystring(raw ?? ''),
    headers: accept === undefined ? {} : { accept: { value: accept } },
    cookies: {},
  };
  if (withRaw) request.rawQueryString = () => raw;
  const before = JSON.parse(JSON.stringify(request)) as CfRequest;
  const originsBefore = fn.origins.length;
  const result = JSON.parse(
    JSON.stringify(
      fn.handler({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: '1.2.3.4' }, request }),
    ),
  ) as Record<string, unknown>;
  const originCalls = fn.origins.length - originsBefore;
  if ('statusCode' in result) {
    expect(originCalls).toBe(0);
    const headers = Object.fromEntries(
      Object.entries(result.headers as Record<string, { value: string }>).map(([name, h]) => [name, h.value]),
    );
    const body = result.body as { encoding: string; data: string } | undefined;
    if (body) expect(body.encoding).toBe('text');
    return { kind: 'answer', status: result.statusCode as number, headers, body: body?.data };
  }
  if (originCalls) {
    expect(originCalls).toBe(1);
    expect(fn.origins.at(-1)).toEqual(LIVE_ORIGIN);
    expect({ uri: result.uri, querystring: result.querystring, headers: result.headers }).toEqual({
      uri: before.uri,
      querystring: before.querystring,
      headers: before.headers,
    });
    return { kind: 'live' };
  }
  // The query stays as sent, so a failover to the live origin still says what was asked.
  expect(result.querystring).toEqual(before.querystring);
  if (result.uri === before.uri) return { kind: 'untouched' };
  expect(result.headers).not.toHaveProperty('accept');
  expect(String(result.uri)).toMatch(/^\//);
  return { kind: 'object', key: String(result.uri).slice(1) };
}

function notPrecomputed(method: string): Outcome {
  return {
    kind: 'answer',
    status: 404,
    headers: answerHeaders(ROUTES.headers.Allow),
    body: method === 'HEAD' ? undefined : notPrecomputedJson(),
  };
}

function notAllowed(method: string): Outcome {
  return {
    kind: 'answer',
    status: 405,
    headers: answerHeaders('GET, HEAD'),
    body: `{"detail":"Method \\"${method}\\" not allowed."}`,
  };
}

function answerHeaders(allow: string): Record<string, string> {
  return {
    allow,
    vary: 'Accept',
    'access-control-allow-origin': '*',
    'content-type': 'application/json',
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'cross-origin-opener-policy': 'same-origin',
  };
}

/** What the function must do for a request without Accept header: fileKeyFor's file, else the live origin or an honest 404/405. */
function expectedOutcome(
  spec: Pick<SiteSpec, 'mount' | 'count' | 'liveUrl'>,
  { method = 'GET', uri, raw }: Call,
): Outcome {
  if (uri !== `${spec.mount}/cities/`) return { kind: 'untouched' };
  const readOnly = method === 'GET' || method === 'HEAD';
  const key = readOnly ? fileKeyFor(parseQuery(raw ?? ''), spec.count) : null;
  if (key) return { kind: 'object', key };
  if (spec.liveUrl) return { kind: 'live' };
  return readOnly ? notPrecomputed(method) : notAllowed(method);
}

function splitTarget(target: string): { path: string; raw: string | undefined } {
  const q = target.indexOf('?');
  return q < 0 ? { path: target, raw: undefined } : { path: target.slice(0, q), raw: target.slice(q + 1) };
}

/** One answer as a client of the distribution sees it: from S3, from the live origin (directly or by failover), or from the function. */
interface Answer {
  readonly status: number;
  readonly body: string;
  readonly via: 'object' | 'failover' | 'live' | 'function' | 'origin';
}

/**
 * A CloudFront distribution in front of a site on S3: the viewer-request function, S3 (the site
 * directory: an object or a 403), the origin group failing over on 403/404 to the live origin
 * (a running `cities-api serve`), and other paths left to the default origin (not simulated).
 */
async function distribution(
  fn: LoadedFunction,
  site: string,
  live: RunningServer | null,
  want: KitAnswer,
  prefix: string,
): Promise<Answer | null> {
  const { path, raw } = splitTarget(want.target);
  const outcome = run(fn, { method: want.method, uri: prefix + path, raw });
  const query = raw === undefined ? '' : `?${raw}`;
  const ask = async (target: string, via: Answer['via']): Promise<Answer> => {
    const res = await rawRequest(`${live!.url}${target}`, { method: want.method });
    return { status: res.status, body: res.body.toString('utf8'), via };
  };
  if (outcome.kind === 'answer') return { status: outcome.status, body: outcome.body ?? '', via: 'function' };
  if (outcome.kind === 'untouched') return null;
  if (outcome.kind === 'live') return ask(prefix + want.target, 'live');
  const file = join(site, outcome.key);
  if (existsSync(file))
    return { status: 200, body: want.method === 'HEAD' ? '' : await readFile(file, 'utf8'), via: 'object' };
  if (!live)
    return { status: 404, body: await readFile(join(site, ROUTES.extras.notPrecomputed), 'utf8'), via: 'origin' };
  return ask(`/${outcome.key}${query}`, 'failover');
}

/** The kit's `core` comparison: status, and the JSON body where the reference recorded one (HEAD: none). */
function expectKitAnswer(got: Answer, want: KitAnswer, label: string): void {
  expect(got.status, label).toBe(want.status);
  if (want.method === 'HEAD') expect(got.body, label).toBe('');
  else if (want.level === 'core' && want.json !== undefined) expect(JSON.parse(got.body), label).toEqual(want.json);
}

describe('the kit through a CloudFront distribution: function, S3, failover to the live origin', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-cloudfront-')));
  afterAll(() => cleanup());
  const totals = { requests: 0, object: 0, failover: 0, live: 0, function: 0, origin: 0 };

  describe.each(KIT_DATASETS)('kit dataset $name', ({ name, baseUrl, prefix }) => {
    let built: string;
    const site = () => built;
    let spec: SiteSpec;
    let live: RunningServer;
    beforeAll(async () => {
      built = await kitSite(name, baseUrl);
      spec = specOf((await readManifest(site()))!);
      live = await serve({ dir: site(), port: 0, failoverOrigin: true });
    });
    afterAll(() => live.close());

    it("every GET and HEAD answer is the reference's; the build wrote this very function into the site", async () => {
      const code = cloudFrontFunction({ ...spec, liveUrl: LIVE_URL });
      expect(Buffer.byteLength(code)).toBeLessThan(CLOUDFRONT_FUNCTION_MAX_BYTES);
      expect(await readFile(join(site(), ROUTES.extras.cloudfront), 'utf8')).toBe(cloudFrontFunction(spec));
      const fn = loadFunction(code);
      const counts = { requests: 0, object: 0, failover: 0, live: 0, function: 0, origin: 0 };
      for (const want of await kitAnswers(name)) {
        if (want.method !== 'GET' && want.method !== 'HEAD') continue;
        const got = await distribution(fn, site(), live, want, prefix);
        if (!got) continue;
        counts.requests++;
        counts[got.via]++;
        expectKitAnswer(got, want, `${want.method} ${want.target} (${got.via})`);
      }
      console.log(
        `${name} through CloudFront: ${counts.object} of ${counts.requests} GET/HEAD answers from S3 objects, ${counts.failover} by failover, ${counts.live} sent live`,
      );
      for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += counts[key];
      expect(counts.object).toBeGreaterThanOrEqual(40);
    });
  });

  afterAll(() => {
    console.log(
      `kit through CloudFront: ${totals.object} of ${totals.requests} GET/HEAD answers from S3 objects, ${totals.failover} by failover to the live origin, ${totals.live} sent live`,
    );
  });
});

describe('a function generated before a rebuild never answers wrongly: a missing object fails over', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-cloudfront-stale-')));
  afterAll(() => cleanup());

  it.each([
    ['11 -> 48 cities', 'cities11', [10, 20, 50, 100], 'cities48', [10, 20, 50, 100]],
    ['48 -> 11 cities', 'cities48', [10, 20, 50, 100], 'cities11', [10, 20, 50, 100]],
    ['page sizes 10,20 -> 5,50', 'cities48', [10, 20], 'cities48', [5, 50]],
  ])('%s', async (label, before, beforeSizes, after, afterSizes) => {
    const site = join(root, label.replace(/\W+/g, '-'));
    const baseUrl = 'http://api.example.com';
    await build({
      data: join(KIT, `${before}.csv`),
      out: site,
      baseUrl,
      collation: 'codepoint',
      pageSizes: beforeSizes,
      compress: false,
    });
    // What `cities-api config cloudfront --live-url` printed for the site as it was.
    const stale = loadFunction(cloudFrontFunction({ ...specOf((await readManifest(site))!), liveUrl: LIVE_URL }));
    await build({
      data: join(KIT, `${after}.csv`),
      out: site,
      baseUrl,
      collation: 'codepoint',
      pageSizes: afterSizes,
      compress: false,
    });
    const live = await serve({ dir: site, port: 0, failoverOrigin: true });
    try {
      const seen = { object: 0, failover: 0 };
      for (const want of await kitAnswers(after)) {
        if (want.method !== 'GET' && want.method !== 'HEAD') continue;
        const got = await distribution(stale, site, live, want, '');
        if (!got) continue;
        if (got.via === 'object' || got.via === 'failover') seen[got.via]++;
        expectKitAnswer(got, want, `${want.method} ${want.target} (${got.via})`);
      }
      console.log(
        `${label}: a function of the old site answered ${after}'s kit: ${seen.object} from S3, ${seen.failover} by failover`,
      );
      expect(seen.failover).toBeGreaterThan(0);
    } finally {
      await live.close();
    }
  });
});

const CITIES48 = testSpec({ count: 48 });
const MOUNTED = testSpec({ baseUrl: 'https://cities.example.org/api/v1', count: 48 });

describe('query to object: every query a file can answer, by the route table alone', () => {
  const fn = loadFunction(cloudFrontFunction(CITIES48));
  const cases: [raw: string | undefined, key: string | null][] = [
    [undefined, 'cities/default/default/1.json'],
    ['', 'cities/default/default/1.json'],
    ['page=2', 'cities/default/default/2.json'],
    // parameter order
    ['page=2&page_size=20&ordering=-name_ar', 'cities/-name_ar/20/2.json'],
    ['ordering=-name_ar&page_size=20&page=2', 'cities/-name_ar/20/2.json'],
    ['page_size=10', 'cities/default/10/1.json'],
    ['page_size=7&page=3', 'cities/default/7/3.json'],
    ['ordering=name_tr&page=last', 'cities/name_tr/default/last.json'],
    // repeated parameters, even with equal values or spelled differently
    ['page=2&page=2', null],
    ['ordering=name_en&ordering=-name_ar&page=2', null],
    ['page=1&pag%65=2', null],
    // percent-encoded and plus-encoded spellings
    ['page=%32', 'cities/default/default/2.json'],
    ['pag%65=2', 'cities/default/default/2.json'],
    ['ordering=%2Dname_ar', 'cities/-name_ar/default/1.json'],
    ['ordering=-name%5far&page_size=1%30', 'cities/-name_ar/10/1.json'],
    ['ordering=+name_en', null],
    ['ordering=%2Bname_en', null],
    ['page=2+', null],
    ['ordering=name_%E2%80%8Ben', null],
    // malformed escapes and bad UTF-8 (Python keeps or replaces them: never a value a file answers)
    ['page=%zz', null],
    ['page=%2', null],
    ['page=%', null],
    ['pag%e=2', null],
    ['page=%FF', null],
    ['page=%C3%A9', null],
    ['page=%ED%A0%80', null],
    // page sizes >= count on page 1 or last: the all-cities file, named after the count
    ['page_size=48', 'cities/default/all-48.json'],
    ['page_size=49&page=1&ordering=name_fr', 'cities/name_fr/all-48.json'],
    ['page_size=1000000000000000000000', 'cities/default/all-48.json'],
    ['page_size=1000000000000000000000&page=last', 'cities/default/all-48.json'],
    ['page_size=99999&page=2', 'cities/default/99999/2.json'],
    // up to 300 digits; beyond, DRF may count 0 pages (page=last is 404) or refuse the number (default size): live
    [`page_size=1${'0'.repeat(299)}&page=last`, 'cities/default/all-48.json'],
    [`page_size=1${'0'.repeat(300)}`, null],
    ['page_size=47', 'cities/default/47/1.json'],
    ['page_size=010', null],
    ['page_size=0', null],
    ['page_size=-5', null],
    // empty values and names without value
    ['page=', null],
    ['ordering=', null],
    ['page_size=', null],
    ['page', null],
    ['&&page=2&', 'cities/default/default/2.json'],
    ['=2', null],
    // pages: any positive number of up to 15 digits (whether the site holds it is S3's to say)
    ['page=6', 'cities/default/default/6.json'],
    ['page=0', null],
    ['page=-1', null],
    ['page=2.0', null],
    ['page=02', null],
    ['page=999999999999999', 'cities/default/default/999999999999999.json'],
    ['page=1000000000000000', null],
    ['page=LAST', null],
    // other parameters
    ['ordering=id', null],
    ['ordering=name_en,-name_ar', null],
    ['format=json', null],
    ['foo=bar&page=2', null],
    ['__proto__=1', null],
    ['hasOwnProperty=1', null],
    ['ordering=default', null],
  ];

  it.each(cases)('?%s → %s', (raw, key) => {
    expect(fileKeyFor(parseQuery(raw ?? ''), 48), 'the table agrees with fileKeyFor').toBe(key);
    for (const withRaw of [true, false]) {
      expect(run(fn, { uri: '/cities/', raw, withRaw })).toEqual(key ? { kind: 'object', key } : notPrecomputed('GET'));
    }
  });

  it('decides as fileKeyFor(parseQuery(query), count) on random queries', () => {
    const parts = [
      'page',
      'page_size',
      'ordering',
      'pag',
      '_size',
      '=',
      '=',
      '&',
      '&',
      '%',
      '%3',
      '%32',
      '%2D',
      '%2d',
      '%5F',
      '%65',
      '%zz',
      '%FF',
      '%C3%A9',
      '+',
      '-',
      '0',
      '1',
      '2',
      '5',
      '6',
      '10',
      '20',
      '48',
      '49',
      '100',
      'last',
      'name_en',
      'name_ar',
      'name_',
      'id',
      '1000000000000000000000',
      'é',
    ];
    const query = fc.array(fc.constantFrom(...parts), { maxLength: 14 }).map((p) => p.join(''));
    fc.assert(
      fc.property(query, fc.boolean(), (raw, withRaw) => {
        expect(run(fn, { uri: '/cities/', raw, withRaw })).toEqual(expectedOutcome(CITIES48, { uri: '/cities/', raw }));
      }),
      { numRuns: 3000 },
    );
  });

  it('holds no setting: sites with other page sizes and orderings get the same function', () => {
    expect(cloudFrontFunction(testSpec({ count: 48, pageSizes: [7], orderings: ['name_fr'] }))).toBe(
      cloudFrontFunction(CITIES48),
    );
  });

  it('leaves other paths alone (/openapi.json is the S3 object), and answers only the mounted path (as clients spell it)', () => {
    for (const uri of [
      '/cities',
      '/cities/x',
      '/cities/index.html',
      '/',
      '/openapi.json',
      '/api/v1/cities/',
      '/CITIES/',
      '/cities//',
    ]) {
      expect(run(fn, { uri, raw: 'page=2' }), uri).toEqual({ kind: 'untouched' });
    }
    const mounted = loadFunction(cloudFrontFunction(MOUNTED));
    expect(run(mounted, { uri: '/api/v1/cities/', raw: 'page=2' })).toEqual({
      kind: 'object',
      key: 'cities/default/default/2.json',
    });
    expect(run(mounted, { uri: '/cities/', raw: 'page=2' })).toEqual({ kind: 'untouched' });
    const accented = loadFunction(cloudFrontFunction(testSpec({ baseUrl: 'https://x.example.org/café' })));
    expect(run(accented, { uri: '/caf%C3%A9/cities/', raw: 'page=2' })).toEqual({
      kind: 'object',
      key: 'cities/default/default/2.json',
    });
  });
});

describe('methods, Accept and the live origin', () => {
  const alone = loadFunction(cloudFrontFunction(CITIES48));
  const live = loadFunction(cloudFrontFunction({ ...CITIES48, liveUrl: LIVE_URL }));

  it('answers other methods 405 without a live origin, and sends them live with one', () => {
    for (const method of ['POST', 'OPTIONS', 'PUT', 'DELETE', 'PATCH']) {
      expect(run(alone, { method, uri: '/cities/', raw: 'page=2' })).toEqual(notAllowed(method));
      expect(run(live, { method, uri: '/cities/', raw: 'page=2' })).toEqual({ kind: 'live' });
    }
  });

  it('answers HEAD of an uncovered query without a body', () => {
    expect(run(alone, { method: 'HEAD', uri: '/cities/', raw: 'ordering=name_en,name_ar' })).toEqual(
      notPrecomputed('HEAD'),
    );
    expect(run(alone, { method: 'HEAD', uri: '/cities/', raw: 'page=2' })).toEqual({
      kind: 'object',
      key: 'cities/default/default/2.json',
    });
  });

  it('sends live, with a live origin, what DRF would not answer with plain JSON', () => {
    const cases: [accept: string, file: boolean][] = [
      ['*/*', true],
      ['application/json', true],
      ['application/*', true],
      ['Application/JSON', true],
      ['image/png, */*', true],
      ['text/plain, application/json', true],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
      ['text/html', false],
      ['TEXT/HTML, */*', false],
      ['text/*', false],
      ['*/html', false],
      ['application/json; indent=4', false],
      ['application/xml', false],
      ['', false],
      // DRF strips U+001C-U+001F and U+0085 around a range (str.strip()), JavaScript's trim() does not: such ranges go live.
      ['*/*, \x85text/*', false],
      ['*/*,\x1ctext/html', false],
      ['application/json, \x1f*/html\x1f', false],
      ['\x85application/json', false],
    ];
    for (const [accept, file] of cases) {
      expect(run(live, { uri: '/cities/', raw: 'page=2', accept }), accept).toEqual(
        file ? { kind: 'object', key: 'cities/default/default/2.json' } : { kind: 'live' },
      );
      // A static-only host answers its file whatever the Accept header.
      expect(run(alone, { uri: '/cities/', raw: 'page=2', accept })).toEqual({
        kind: 'object',
        key: 'cities/default/default/2.json',
      });
    }
  });

  it('serves a file only for Accept headers that get compact JSON from the reference', () => {
    const ranges = [
      '*/*',
      'application/json',
      'application/*',
      'text/html',
      'text/*',
      '*/html',
      '*/json',
      'image/png',
      'text/plain',
      '*',
      '',
      ' ',
      'APPLICATION/JSON',
      'Text/Html',
      'application/jsonx',
    ];
    const params = ['', ';q=0.9', '; indent=4', ';indent=0'];
    // Around a range, the whitespace Python's str.strip() removes and JavaScript's trim() does not (and the reverse).
    const spaces = ['', ' ', '\t', '\x0b', '\x1c', '\x1f', '\x85', '\xa0'];
    const range = fc
      .tuple(fc.constantFrom(...ranges), fc.constantFrom(...params), fc.constantFrom(...spaces))
      .map(([r, p, s]) => s + r + p + s);
    fc.assert(
      fc.property(fc.array(range, { minLength: 1, maxLength: 4 }), (list) => {
        const accept = list.join(',');
        if (run(live, { uri: '/cities/', raw: 'page=2', accept }).kind === 'object') {
          expect(negotiate(undefined, accept), accept).toEqual({ renderer: 'json', indent: null });
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('points live requests at the live server', () => {
    expect(liveOrigin('https://live.example.org/')).toEqual(LIVE_ORIGIN);
    expect(liveOrigin('http://live.example.org:8080/base/')).toEqual({
      domainName: 'live.example.org',
      originPath: '/base',
      customOriginConfig: { port: 8080, protocol: 'http', sslProtocols: ['TLSv1.2'] },
      originAccessControlConfig: { enabled: false },
    });
    for (const bad of [
      'live.example.org',
      'ftp://live.example.org',
      'https://live.example.org/?x=1',
      'https://user:pw@live.example.org',
    ]) {
      expect(() => liveOrigin(bad), bad).toThrow(CitiesApiError);
    }
  });
});

describe('the generated code', () => {
  it('is deterministic, says what it was generated for, and imports cloudfront only for a live origin', () => {
    const code = cloudFrontFunction(MOUNTED);
    expect(cloudFrontFunction(MOUNTED)).toBe(code);
    const first =
      '// Generated by cities-api for https://cities.example.org/api/v1/cities/ (48 cities). CloudFront Function, viewer-request, cloudfront-js-2.0.';
    expect(code.split('\n')[0]).toBe(first);
    expect(code).not.toContain("cloudfront'");
    const live = cloudFrontFunction({ ...MOUNTED, liveUrl: LIVE_URL });
    expect(live.split('\n').slice(0, 2)).toEqual([CLOUDFRONT_IMPORT, first]);
    expect(live.split(CLOUDFRONT_IMPORT)).toHaveLength(2);
    for (const source of [code, live]) {
      expect(source).not.toMatch(/\beval\b|new Function|\brequire\s*\(|\bBigInt\b|=>/);
      expect(source).toMatch(/^[\x09\x0a\x20-\x7e]*$/);
      expect(Buffer.byteLength(source)).toBeLessThan(CLOUDFRONT_FUNCTION_MAX_BYTES);
    }
  });
});
