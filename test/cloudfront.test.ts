import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import vm from 'node:vm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { CLOUDFRONT_FUNCTION_MAX_BYTES, CLOUDFRONT_IMPORT, cloudFrontFunction, liveOrigin } from '../src/hosts/cloudfront.js';
import { CitiesApiError } from '../src/core/errors.js';
import { hostingSettings, notPrecomputedJson, type HostingSettings } from '../src/hosts/hosting.js';
import { readManifest } from '../src/site/manifest.js';
import { negotiate } from '../src/core/negotiate.js';
import { PRECOMPUTABLE_ORDERINGS } from '../src/core/ordering.js';
import { parseQuery } from '../src/core/query-string.js';
import { ALLOW } from '../src/http/route.js';
import { staticPathFor } from '../src/site/layout.js';
import { KIT, KIT_DATASETS, kitAnswers, tempDir } from './helpers.js';

// The generated function runs in a fresh V8 context (no Node globals, a recording stand-in for
// the `cloudfront` module) on CloudFront's event shape. Every kit request must end where
// staticPathFor says: its S3 object, holding the reference's body, or the live origin / the
// honest 404 of a static-only host.

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
  const globals = imports ? { __cloudfront: { updateRequestOrigin: (params: unknown) => origins.push(JSON.parse(JSON.stringify(params))) } } : {};
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
    [...byName].map(([name, values]) => [name, values.length > 1 ? { value: values[0]!, multiValue: values.map((value) => ({ value })) } : { value: values[0]! }]),
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
    method, uri, querystring: cloudFrontQuerystring(raw ?? ''),
    headers: accept === undefined ? {} : { accept: { value: accept } }, cookies: {},
  };
  if (withRaw) request.rawQueryString = () => raw;
  const before = JSON.parse(JSON.stringify(request)) as CfRequest;
  const originsBefore = fn.origins.length;
  const result = JSON.parse(JSON.stringify(fn.handler({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: '1.2.3.4' }, request }))) as Record<string, unknown>;
  const originCalls = fn.origins.length - originsBefore;
  if ('statusCode' in result) {
    expect(originCalls).toBe(0);
    const headers = Object.fromEntries(Object.entries(result.headers as Record<string, { value: string }>).map(([name, h]) => [name, h.value]));
    const body = result.body as { encoding: string; data: string } | undefined;
    if (body) expect(body.encoding).toBe('text');
    return { kind: 'answer', status: result.statusCode as number, headers, body: body?.data };
  }
  if (originCalls) {
    expect(originCalls).toBe(1);
    expect(fn.origins.at(-1)).toEqual(LIVE_ORIGIN);
    expect({ uri: result.uri, querystring: result.querystring, headers: result.headers }).toEqual({ uri: before.uri, querystring: before.querystring, headers: before.headers });
    return { kind: 'live' };
  }
  if (result.uri === before.uri) {
    expect(result.querystring).toEqual(before.querystring);
    return { kind: 'untouched' };
  }
  expect(result.querystring).toEqual({});
  expect(result.headers).not.toHaveProperty('accept');
  expect(String(result.uri)).toMatch(/^\//);
  return { kind: 'object', key: String(result.uri).slice(1) };
}

/** What the function must do for a request without Accept header, by staticPathFor. */
function expectedOutcome(settings: HostingSettings, { method = 'GET', uri, raw }: Call): Outcome {
  if (uri !== `${settings.mount}/cities/`) return { kind: 'untouched' };
  const readOnly = method === 'GET' || method === 'HEAD';
  const key = readOnly ? staticPathFor(parseQuery(raw ?? ''), settings) : null;
  if (key) return { kind: 'object', key };
  if (settings.liveUrl) return { kind: 'live' };
  return readOnly ? notPrecomputed(settings, method) : notAllowed(method);
}

function notPrecomputed(settings: HostingSettings, method: string): Outcome {
  return { kind: 'answer', status: 404, headers: answerHeaders(ALLOW), body: method === 'HEAD' ? undefined : notPrecomputedJson(settings.pageSizes) };
}

function notAllowed(method: string): Outcome {
  return { kind: 'answer', status: 405, headers: answerHeaders('GET, HEAD'), body: `{"detail":"Method \\"${method}\\" not allowed."}` };
}

function answerHeaders(allow: string): Record<string, string> {
  return {
    allow, vary: 'Accept', 'access-control-allow-origin': '*', 'content-type': 'application/json',
    'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin', 'cross-origin-opener-policy': 'same-origin',
  };
}

function splitTarget(target: string): { path: string; raw: string | undefined } {
  const q = target.indexOf('?');
  return q < 0 ? { path: target, raw: undefined } : { path: target.slice(0, q), raw: target.slice(q + 1) };
}

describe('the kit through the CloudFront Function', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-cloudfront-')));
  afterAll(() => cleanup());

  const totals = { requests: 0, objects: 0, live: 0, untouched: 0 };
  const sizes: Record<string, string> = {};

  describe.each(KIT_DATASETS)('kit dataset $name', ({ name, baseUrl, prefix }) => {
    const site = () => join(root, name);
    let staticOnly: HostingSettings;
    let withLive: HostingSettings;

    beforeAll(async () => {
      await build({ data: join(KIT, `${name}.csv`), out: site(), baseUrl, collation: 'codepoint', pageSizes: [10, 20, 50, 100], compress: false });
      const manifest = (await readManifest(site()))!;
      staticOnly = hostingSettings(manifest);
      withLive = hostingSettings(manifest, LIVE_URL);
    });

    it('maps every GET and HEAD to its object with the expected body, or sends it live', async () => {
      const [liveCode, aloneCode] = [cloudFrontFunction(withLive), cloudFrontFunction(staticOnly)];
      sizes[name] = `${Buffer.byteLength(aloneCode)} B static-only, ${Buffer.byteLength(liveCode)} B with a live origin`;
      expect(Buffer.byteLength(liveCode)).toBeLessThan(CLOUDFRONT_FUNCTION_MAX_BYTES);
      expect(Buffer.byteLength(aloneCode)).toBeLessThan(CLOUDFRONT_FUNCTION_MAX_BYTES);
      const live = loadFunction(liveCode);
      const alone = loadFunction(aloneCode);
      const counts = { requests: 0, objects: 0, live: 0, untouched: 0 };
      for (const want of await kitAnswers(name)) {
        const { path, raw } = splitTarget(want.target);
        const call = { method: want.method, uri: prefix + path, raw };
        if (want.method === 'OPTIONS') {
          expect(run(live, call)).toEqual({ kind: 'live' });
          expect(run(alone, call)).toEqual(notAllowed('OPTIONS'));
          continue;
        }
        counts.requests++;
        const outcome = run(live, call);
        for (const withRaw of [true, false]) {
          expect(run(live, { ...call, withRaw }), `${want.method} ${want.target}`).toEqual(expectedOutcome(withLive, call));
          expect(run(alone, { ...call, withRaw }), `${want.method} ${want.target} (static only)`).toEqual(expectedOutcome(staticOnly, call));
        }
        if (outcome.kind === 'live') counts.live++;
        if (outcome.kind === 'untouched') counts.untouched++;
        if (outcome.kind !== 'object') continue;
        expect.soft(want.status, `${want.target} is covered by ${outcome.key}`).toBe(200);
        const file = join(site(), outcome.key);
        expect(existsSync(file), `${outcome.key} exists`).toBe(true);
        if (want.method === 'GET') expect(JSON.parse(await readFile(file, 'utf8')), `${want.target} → ${outcome.key}`).toEqual(want.json);
        counts.objects++;
      }
      console.log(`${name}: ${counts.objects} of ${counts.requests} kit GET/HEAD requests answered from an S3 object holding the expected body, ${counts.live} sent live, ${counts.untouched} left to the default origin (another path)`);
      for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += counts[key];
      expect(counts.objects).toBeGreaterThanOrEqual(40);
    });
  });

  afterAll(() => {
    console.log(`CloudFront Function size: ${Object.entries(sizes).map(([name, text]) => `${name} ${text}`).join('; ')} (limit ${CLOUDFRONT_FUNCTION_MAX_BYTES})`);
    console.log(`kit through CloudFront: ${totals.objects} of ${totals.requests} GET/HEAD requests answered from S3 objects holding the expected body, ${totals.live} sent live, ${totals.untouched} left to the default origin`);
  });
});

const CITIES48: HostingSettings = { baseUrl: 'http://api.example.com', mount: '', count: 48, pageSizes: [10, 20, 50, 100], orderings: PRECOMPUTABLE_ORDERINGS };
const MOUNTED: HostingSettings = { ...CITIES48, baseUrl: 'https://cities.example.org/api/v1', mount: '/api/v1' };

describe('query to object', () => {
  const fn = loadFunction(cloudFrontFunction(CITIES48));
  const cases: [raw: string | undefined, key: string | null][] = [
    [undefined, 'cities/default/default/1.json'],
    ['', 'cities/default/default/1.json'],
    ['page=2', 'cities/default/default/2.json'],
    // parameter order
    ['page=2&page_size=20&ordering=-name_ar', 'cities/-name_ar/20/2.json'],
    ['ordering=-name_ar&page_size=20&page=2', 'cities/-name_ar/20/2.json'],
    ['page_size=10', 'cities/default/10/1.json'],
    ['page_size=100&page=last', 'cities/default/100/last.json'],
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
    // malformed escapes and bad UTF-8 (Python keeps or replaces them: never a covered value)
    ['page=%zz', null],
    ['page=%2', null],
    ['page=%', null],
    ['pag%e=2', null],
    ['page=%FF', null],
    ['page=%C3%A9', null],
    ['page=%ED%A0%80', null],
    // page sizes >= count: one all.json, whatever the size
    ['page_size=48', 'cities/default/all.json'],
    ['page_size=49&page=1&ordering=name_fr', 'cities/name_fr/all.json'],
    ['page_size=1000000000000000000000', 'cities/default/all.json'],
    ['page_size=1000000000000000000000&page=last', 'cities/default/all.json'],
    ['page_size=99999&page=2', null],
    // up to 300 digits; beyond, DRF may count 0 pages (page=last is 404) or refuse the number (default size): live
    [`page_size=1${'0'.repeat(299)}&page=last`, 'cities/default/all.json'],
    [`page_size=1${'0'.repeat(300)}`, null],
    ['page_size=47', null],
    ['page_size=7&page=3', null],
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
    // pages out of range or not canonical
    ['page=5', 'cities/default/default/5.json'],
    ['page=6', null],
    ['page_size=20&page=3', 'cities/default/20/3.json'],
    ['page_size=20&page=4', null],
    ['page=0', null],
    ['page=-1', null],
    ['page=2.0', null],
    ['page=02', null],
    ['page=1000000000000000', null],
    ['page=LAST', null],
    // other parameters
    ['ordering=id', null],
    ['ordering=name_en,-name_ar', null],
    ['format=json', null],
    ['foo=bar&page=2', null],
    ['__proto__=1', null],
    ['ordering=default', null],
  ];

  it.each(cases)('?%s → %s', (raw, key) => {
    expect(staticPathFor(parseQuery(raw ?? ''), CITIES48), 'the table agrees with staticPathFor').toBe(key);
    for (const withRaw of [true, false]) {
      expect(run(fn, { uri: '/cities/', raw, withRaw })).toEqual(key ? { kind: 'object', key } : notPrecomputed(CITIES48, 'GET'));
    }
  });

  it('decides as staticPathFor(parseQuery(query)) on random queries', () => {
    const parts = [
      'page', 'page_size', 'ordering', 'pag', '_size', '=', '=', '&', '&', '%', '%3', '%32', '%2D', '%2d', '%5F', '%65', '%zz', '%FF',
      '%C3%A9', '+', '-', '0', '1', '2', '5', '6', '10', '20', '48', '49', '100', 'last', 'name_en', 'name_ar', 'name_', 'id', '1000000000000000000000', 'é',
    ];
    const query = fc.array(fc.constantFrom(...parts), { maxLength: 14 }).map((p) => p.join(''));
    fc.assert(
      fc.property(query, fc.boolean(), (raw, withRaw) => {
        expect(run(fn, { uri: '/cities/', raw, withRaw })).toEqual(expectedOutcome(CITIES48, { uri: '/cities/', raw }));
      }),
      { numRuns: 3000 },
    );
  });

  it('maps only the orderings the site precomputed', () => {
    const some = { ...CITIES48, orderings: ['name_en', '-name_ar', 'default'] };
    const fn = loadFunction(cloudFrontFunction(some));
    const cases: [raw: string, key: string | null][] = [
      ['page=2', 'cities/default/default/2.json'],
      ['ordering=name_en&page=2', 'cities/name_en/default/2.json'],
      ['ordering=-name_ar&page_size=1000', 'cities/-name_ar/all.json'],
      ['ordering=-name_en', null],
      ['ordering=name_ar&page=2', null],
      ['ordering=default', null],
    ];
    for (const [raw, key] of cases) {
      expect(staticPathFor(parseQuery(raw), some), raw).toBe(key);
      expect(run(fn, { uri: '/cities/', raw }), raw).toEqual(key ? { kind: 'object', key } : notPrecomputed(some, 'GET'));
    }
    const withoutDefault = loadFunction(cloudFrontFunction({ ...CITIES48, orderings: ['name_fr'] }));
    expect(run(withoutDefault, { uri: '/cities/', raw: 'page=2' }).kind).toBe('answer');
    expect(run(withoutDefault, { uri: '/cities/', raw: 'ordering=name_fr&page=2' })).toEqual({ kind: 'object', key: 'cities/name_fr/default/2.json' });
    // Anything but an ordering key is ignored, as staticPathFor only maps name_* fields.
    const odd = loadFunction(cloudFrontFunction({ ...CITIES48, orderings: ['default', 'id', 'name_en,-name_ar'] }));
    expect(run(odd, { uri: '/cities/', raw: 'ordering=id' }).kind).toBe('answer');
    expect(run(odd, { uri: '/cities/', raw: 'ordering=name_en,-name_ar' }).kind).toBe('answer');
  });

  it('decides as staticPathFor on random queries when only some orderings are precomputed', () => {
    const orderings = fc.subarray([...PRECOMPUTABLE_ORDERINGS], { minLength: 1 });
    const raw = fc.array(fc.constantFrom('ordering=', 'page=2', 'page_size=20', '&', 'default', 'name_en', '-name_en', '-name_ar', 'name_tr', '%2D'), { maxLength: 8 }).map((p) => p.join(''));
    fc.assert(
      fc.property(orderings, raw, (list, query) => {
        const settings = { ...CITIES48, orderings: list };
        expect(run(loadFunction(cloudFrontFunction(settings)), { uri: '/cities/', raw: query })).toEqual(expectedOutcome(settings, { uri: '/cities/', raw: query }));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves other paths alone, and answers only the mounted path', () => {
    for (const uri of ['/cities', '/cities/x', '/cities/index.html', '/', '/api/v1/cities/', '/CITIES/', '/cities//']) {
      expect(run(fn, { uri, raw: 'page=2' }), uri).toEqual({ kind: 'untouched' });
    }
    const mounted = loadFunction(cloudFrontFunction(MOUNTED));
    expect(run(mounted, { uri: '/api/v1/cities/', raw: 'page=2' })).toEqual({ kind: 'object', key: 'cities/default/default/2.json' });
    expect(run(mounted, { uri: '/cities/', raw: 'page=2' })).toEqual({ kind: 'untouched' });
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
    expect(run(alone, { method: 'HEAD', uri: '/cities/', raw: 'page_size=7' })).toEqual(notPrecomputed(CITIES48, 'HEAD'));
    expect(run(alone, { method: 'HEAD', uri: '/cities/', raw: 'page=2' })).toEqual({ kind: 'object', key: 'cities/default/default/2.json' });
  });

  it('sends live, with a live origin, what DRF would not answer with plain JSON', () => {
    const cases: [accept: string, file: boolean][] = [
      ['*/*', true], ['application/json', true], ['application/*', true], ['Application/JSON', true],
      ['image/png, */*', true], ['text/plain, application/json', true],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false], ['text/html', false], ['TEXT/HTML, */*', false],
      ['text/*', false], ['*/html', false], ['application/json; indent=4', false], ['application/xml', false], ['', false],
      // DRF strips U+001C-U+001F and U+0085 around a range (str.strip()), JavaScript's trim() does not: such ranges go live.
      ['*/*, \x85text/*', false], ['*/*,\x1ctext/html', false], ['application/json, \x1f*/html\x1f', false], ['\x85application/json', false],
    ];
    for (const [accept, file] of cases) {
      expect(run(live, { uri: '/cities/', raw: 'page=2', accept }), accept).toEqual(file ? { kind: 'object', key: 'cities/default/default/2.json' } : { kind: 'live' });
      // A static-only host answers its file whatever the Accept header.
      expect(run(alone, { uri: '/cities/', raw: 'page=2', accept })).toEqual({ kind: 'object', key: 'cities/default/default/2.json' });
    }
  });

  it('serves a file only for Accept headers that get compact JSON from the reference', () => {
    const ranges = ['*/*', 'application/json', 'application/*', 'text/html', 'text/*', '*/html', '*/json', 'image/png', 'text/plain', '*', '', ' ', 'APPLICATION/JSON', 'Text/Html', 'application/jsonx'];
    const params = ['', ';q=0.9', '; indent=4', ';indent=0'];
    // Around a range, the whitespace Python's str.strip() removes and JavaScript's trim() does not (and the reverse).
    const spaces = ['', ' ', '\t', '\x0b', '\x1c', '\x1f', '\x85', '\xa0'];
    const range = fc.tuple(fc.constantFrom(...ranges), fc.constantFrom(...params), fc.constantFrom(...spaces)).map(([r, p, s]) => s + r + p + s);
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
      domainName: 'live.example.org', originPath: '/base',
      customOriginConfig: { port: 8080, protocol: 'http', sslProtocols: ['TLSv1.2'] },
      originAccessControlConfig: { enabled: false },
    });
    for (const bad of ['live.example.org', 'ftp://live.example.org', 'https://live.example.org/?x=1', 'https://user:pw@live.example.org']) {
      expect(() => liveOrigin(bad), bad).toThrow(CitiesApiError);
    }
  });
});

describe('the generated code', () => {
  it('is deterministic, says what it was generated for, and imports cloudfront only for a live origin', () => {
    const code = cloudFrontFunction(MOUNTED);
    expect(cloudFrontFunction(MOUNTED)).toBe(code);
    expect(code.split('\n')[0]).toBe('// Generated by cities-api for https://cities.example.org/api/v1/cities/ (48 cities, page sizes 10,20,50,100, 33 of 33 orderings).');
    expect(code).not.toContain('cloudfront\'');
    const live = cloudFrontFunction({ ...MOUNTED, liveUrl: LIVE_URL });
    expect(live.split('\n').slice(0, 2)).toEqual([CLOUDFRONT_IMPORT, '// Generated by cities-api for https://cities.example.org/api/v1/cities/ (48 cities, page sizes 10,20,50,100, 33 of 33 orderings).']);
    expect(live.split(CLOUDFRONT_IMPORT)).toHaveLength(2);
    for (const source of [code, live]) {
      expect(source).not.toMatch(/\beval\b|new Function|\brequire\s*\(|\bBigInt\b|=>/);
      expect(source).toMatch(/^[\x09\x0a\x20-\x7e]*$/);
    }
  });

  it('stays under 10 KB, and refuses settings that cannot', () => {
    const many = { ...CITIES48, liveUrl: LIVE_URL, pageSizes: Array.from({ length: 200 }, (_, i) => i + 1) };
    expect(Buffer.byteLength(cloudFrontFunction(many))).toBeLessThan(CLOUDFRONT_FUNCTION_MAX_BYTES);
    const tooMany = { ...many, pageSizes: Array.from({ length: 2000 }, (_, i) => i + 1) };
    expect(() => cloudFrontFunction(tooMany)).toThrow(/over CloudFront's 10240-byte limit/);
  });

  it('takes a size of 200 as configured and pages it at runtime', () => {
    const fn = loadFunction(cloudFrontFunction({ ...CITIES48, count: 1234, pageSizes: [7, 200] }));
    expect(run(fn, { uri: '/cities/', raw: 'page_size=200&page=7' })).toEqual({ kind: 'object', key: 'cities/default/200/7.json' });
    expect(run(fn, { uri: '/cities/', raw: 'page_size=200&page=8' }).kind).toBe('answer');
    expect(run(fn, { uri: '/cities/', raw: 'page_size=7&page=177' })).toEqual({ kind: 'object', key: 'cities/default/7/177.json' });
    expect(run(fn, { uri: '/cities/', raw: 'page_size=1234' })).toEqual({ kind: 'object', key: 'cities/default/all.json' });
    expect(run(fn, { uri: '/cities/', raw: 'page_size=1233' }).kind).toBe('answer');
    const empty = loadFunction(cloudFrontFunction({ ...CITIES48, count: 0 }));
    expect(run(empty, { uri: '/cities/', raw: 'page_size=1' })).toEqual({ kind: 'object', key: 'cities/default/all.json' });
    expect(run(empty, { uri: '/cities/', raw: 'page=last' })).toEqual({ kind: 'object', key: 'cities/default/default/last.json' });
  });
});
