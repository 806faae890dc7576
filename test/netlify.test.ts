import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import { parseAllRedirects } from 'netlify-redirect-parser';
import { parseAllHeaders } from '@netlify/headers-parser';
import { generateManifest, mergeDeclarations } from '@netlify/edge-bundler';
import { netlifyEdgeConfig } from '../src/platforms/netlify/adapter.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { ROUTES } from '../src/core/route-table.js';
import { specOf } from '../src/site/manifest.js';
import { readManifest } from '../src/store/manifest-file.js';
import type { SiteSpec } from '../src/site/spec.js';
import { NETLIFY_CACHE_CONTROL, netlifyHeaders, netlifyRedirects } from '../src/hosts/netlify.js';
import { PRECOMPUTABLE_ORDERINGS } from '../src/core/ordering.js';
import { parseQuery, type QueryPair } from '../src/core/query-string.js';
import { allPath, staticPathFor } from '../src/site/layout.js';
import { KIT, KIT_DATASETS, kitAnswers, tempDir, testSpec, type KitAnswer } from './helpers.js';
import { kitSite } from './edge-helpers.js';

// Every GET of the kit, routed by Netlify's own redirect engine through the generated _redirects:
// a request the site covers must reach exactly its file (whose body is the reference's); anything
// else must go live (or to the 404 file), except the cases Netlify's rules cannot express, which
// are named below and documented in docs/netlify.md.

interface Match {
  readonly to: string;
  readonly status: number;
}
interface Matcher {
  match(request: object): Match | null;
}
const redirector = createRequire(import.meta.url)('netlify-redirector') as {
  parseJSON(rules: string, options: object): Promise<Matcher>;
};

const LIVE = 'https://live.example.net/';
const PAGE_SIZES = [10, 20, 50, 100];
const ALL_ORDERINGS = PRECOMPUTABLE_ORDERINGS;

/** What Netlify answers that differs from the reference, by name (docs/netlify.md, "Known limits"). */
const DOCUMENTED = {
  sizeAtLeastCount: 'a page_size >= the count that is not configured: sent live (or 404 file) instead of all.json',
  extraParameter: 'an unknown extra parameter: the page of the known ones (same results; links lack it)',
  repeatedParameter: 'a repeated parameter: the last value wins as in Django (same results; links lack the others)',
  missingPage: 'a page no file holds: Netlify\'s 404 page instead of {"detail": "Invalid page."}',
  noTrailingSlash: 'the endpoint without its slash: answered like /cities/ where the reference redirects (301)',
} as const;
type Outcome = 'file' | 'live' | 'notPrecomputed' | keyof typeof DOCUMENTED;

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-netlify-')));
afterAll(() => cleanup());

const totals = new Map<string, number>();

/**
 * Netlify's engine for each set of rules, and its answer to each request it was asked: a match is a
 * pure function of the rules and the request (path and query; no header or cookie here), and costs
 * ~20 ms of WASM at ~300 rules. The kit datasets but prefixed30 get the same _redirects (it does not
 * grow with the data) and mostly the same requests: 770 routings, 434 distinct, each the engine's.
 */
const engines = new Map<string, { matcher: Matcher; answers: Map<string, Match | null> }>();

/** Netlify's engine loaded with `text` as the site's _redirects, normalized as netlify-cli does. */
async function netlifyMatcher(text: string, file: string): Promise<(path: string, query: string) => Match | null> {
  await writeFile(file, text);
  const { redirects, errors } = await parseAllRedirects({
    redirectsFiles: [file],
    configRedirects: [],
    minimal: false,
  });
  expect(errors).toEqual([]);
  expect(redirects).toHaveLength(text.split('\n').filter((line) => line && !line.startsWith('#')).length);
  const rules = (redirects as Record<string, any>[]).map(
    ({ from, query, conditions: { role, country, language, ...conditions }, ...rule }) => ({
      ...rule,
      origin: from,
      params: query,
      conditions: {
        ...conditions,
        ...(role && { Role: role }),
        ...(country && { Country: country }),
        ...(language && { Language: language }),
      },
    }),
  );
  const json = JSON.stringify(rules);
  let engine = engines.get(json);
  if (!engine) engines.set(json, (engine = { matcher: await redirector.parseJSON(json, {}), answers: new Map() }));
  const { matcher, answers } = engine;
  return (raw, query) => {
    // The path decoded, as netlify-cli's rewriter (@netlify/redirects) gives it to the engine, and as Netlify matches it.
    const path = decodeURIComponent(new URL(raw, 'https://example.netlify.app').pathname);
    const key = `${path}?${query}`;
    if (!answers.has(key))
      answers.set(
        key,
        matcher.match({
          scheme: 'https',
          host: 'example.netlify.app',
          path,
          query,
          getHeader: () => '',
          getCookie: () => '',
        }),
      );
    return answers.get(key)!;
  };
}

/** Why an uncovered request may still reach a file: a parameter beyond the three, or one given twice. */
function fileReason(pairs: readonly QueryPair[]): Outcome | null {
  const names = pairs.map(([name]) => name);
  if (names.includes('format')) return null; // it changes the answer: always live
  if (names.some((name) => !['ordering', 'page', 'page_size'].includes(name))) return 'extraParameter';
  return new Set(names).size < names.length ? 'repeatedParameter' : null;
}

describe.each(KIT_DATASETS)('Netlify, kit dataset $name', ({ name, baseUrl, prefix }) => {
  let built: string;
  const site = () => built;
  let answers: KitAnswer[];

  beforeAll(async () => {
    built = await kitSite(name, baseUrl);
    answers = (await kitAnswers(name)).filter((answer) => answer.method === 'GET');
  });

  /** Routes every kit GET and checks it against the reference; returns how many ended each way. */
  async function routeKit(liveUrl: string | undefined): Promise<Map<Outcome, number>> {
    const built = specOf((await readManifest(site()))!);
    const settings: SiteSpec = liveUrl ? { ...built, liveUrl } : built;
    const route = await netlifyMatcher(
      netlifyRedirects(settings),
      join(root, `${name}-${liveUrl ? 'live' : 'static'}._redirects`),
    );
    // The live URL as normalized (LIVE's trailing slash dropped: it was written as given, `//cities/`).
    const uncovered = settings.liveUrl
      ? { to: `${settings.liveUrl.replace(/\/+$/, '')}${prefix}/cities/`, status: 200 }
      : { to: `/${ROUTES.extras.notPrecomputed}`, status: 404 };
    const outcomes = new Map<Outcome, number>();
    for (const want of answers) {
      const [path, query = ''] = want.target.split('?') as [string, string?];
      const pairs = parseQuery(query);
      const covered = staticPathFor(pairs, settings);
      const got = route(prefix + path, query);
      const label = `${want.target} → ${got?.to} ${got?.status}`;
      expect(got, label).not.toBeNull();
      const outcome = await judge(want, path, pairs, covered, got!, uncovered, label, settings.count);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    return outcomes;
  }

  async function judge(
    want: KitAnswer,
    path: string,
    pairs: readonly QueryPair[],
    covered: string | null,
    got: Match,
    uncovered: Match,
    label: string,
    count: number,
  ): Promise<Outcome> {
    if (got.to === uncovered.to) {
      expect(got.status, label).toBe(uncovered.status);
      if (!covered || path !== '/cities/') return uncovered.status === 200 ? 'live' : 'notPrecomputed';
      // The only covered requests not routed to their file: sizes no rule enumerates.
      const [ordering = ROUTES.absent, size] = ['ordering', 'page_size'].map(
        (name) => pairs.find(([n]) => n === name)?.[1],
      );
      const routed = { file: covered, configuredSize: PAGE_SIZES.includes(Number(size)) };
      expect(routed, `${label}: covered by ${covered}, not routed there`).toEqual({
        file: allPath(ordering, count),
        configuredSize: false,
      });
      return 'sizeAtLeastCount';
    }
    expect(got.to.startsWith('/cities/') && got.status === 200, label).toBe(true);
    const file = join(site(), got.to);
    if (path === '/cities') {
      expect([want.status, got.to], label).toEqual([301, `/${covered}`]);
      return 'noTrailingSlash';
    }
    if (covered) {
      expect(got.to, label).toBe(`/${covered}`);
      expect(want.status, label).toBe(200);
      expect(JSON.parse(readFileSync(file, 'utf8')), label).toEqual(want.json);
      return 'file';
    }
    if (!existsSync(file)) {
      expect([want.status, want.json], label).toEqual([404, { detail: 'Invalid page.' }]);
      return 'missingPage';
    }
    const reason = fileReason(pairs);
    expect(reason, `${label}: an uncovered request reached a file for no documented reason`).not.toBeNull();
    expect(want.status, label).toBe(200);
    const body = JSON.parse(readFileSync(file, 'utf8')) as { results: unknown };
    expect(body.results, label).toEqual((want.json as { results: unknown }).results);
    return reason!;
  }

  it.each([
    { mode: 'with a live URL', liveUrl: LIVE },
    { mode: 'without a live URL', liveUrl: undefined },
  ])('routes every kit GET $mode: covered to its file, the rest live or 404', async ({ mode, liveUrl }) => {
    const outcomes = await routeKit(liveUrl);
    const shown = [...outcomes]
      .sort()
      .map(([outcome, n]) => `${n} ${outcome}`)
      .join(', ');
    console.log(`netlify ${name} ${mode}: ${answers.length} GET requests: ${shown}`);
    for (const [outcome, n] of outcomes)
      totals.set(`${mode}: ${outcome}`, (totals.get(`${mode}: ${outcome}`) ?? 0) + n);
    expect(outcomes.get('file')).toBeGreaterThanOrEqual(40);
  });
});

afterAll(() => {
  const lines = [...totals].sort().map(([key, n]) => `  ${n} ${key}`);
  console.log(
    `netlify (all kit datasets):\n${lines.join('\n')}\ndocumented cases:\n${Object.entries(DOCUMENTED)
      .map(([k, v]) => `  ${k}: ${v}`)
      .join('\n')}`,
  );
});

describe('netlifyRedirects', () => {
  const settings = testSpec({
    baseUrl: 'http://api.example.com',
    count: 48,
    pageSizes: PAGE_SIZES,
    orderings: ALL_ORDERINGS,
  });

  it('is deterministic and does not grow with the dataset', () => {
    expect(netlifyRedirects({ ...settings, pageSizes: [...PAGE_SIZES] })).toBe(netlifyRedirects(settings));
    expect(netlifyRedirects({ ...settings, count: 140_000 })).toBe(netlifyRedirects(settings));
    const rules = netlifyRedirects(settings)
      .split('\n')
      .filter((line) => line && !line.startsWith('#'));
    // The endpoint's rules, then one per file of the site's own under _cities-api/ (manifest, dataset, CloudFront function).
    expect(rules).toHaveLength(33 * (2 * PAGE_SIZES.length + 3) + 2 + 3);
  });

  // Netlify's engine as `netlify dev` runs it. `netlify dev` answers a forced 404 (`404!`) with the
  // site's 404 page (a plain-text `Not Found` without one), a plain 404 with its target's content.
  it.each([
    [
      'an uncovered query without a live URL: the JSON 404 file, not forced',
      '/cities/',
      'page_size=7',
      {
        to: `/${ROUTES.extras.notPrecomputed}`,
        status: 404,
        force: false,
      },
    ],
    ['the manifest: absent (forced 404)', `/${ROUTES.extras.manifest}`, '', { status: 404, force: true }],
    ['the dataset copy: absent (forced 404)', `/${ROUTES.extras.dataset}`, '', { status: 404, force: true }],
    ['the CloudFront function: absent (forced 404)', `/${ROUTES.extras.cloudfront}`, '', { status: 404, force: true }],
  ])('%s', async (_name, path, query, expected) => {
    const route = await netlifyMatcher(netlifyRedirects(settings), join(root, 'static._redirects'));
    expect(route(path, query)).toMatchObject(expected);
  });

  it.each([`/${ROUTES.edge.index}`, '/cities/default/default/1.json'])(
    '%s: no rule (the file itself)',
    async (path) => {
      const route = await netlifyMatcher(netlifyRedirects(settings), join(root, 'static._redirects'));
      expect(route(path, '')).toBeNull();
    },
  );

  // Queries beyond the kit: percent-escapes, `last`, and sites built with only some orderings.
  it.each([
    { orderings: ALL_ORDERINGS, query: 'page=%32', file: '/cities/default/default/2.json' },
    { orderings: ALL_ORDERINGS, query: 'ordering=name%5Fen&page=last', file: '/cities/name_en/default/last.json' },
    {
      orderings: ALL_ORDERINGS,
      query: 'page=last&page_size=100&ordering=-name_tr',
      file: '/cities/-name_tr/100/last.json',
    },
    {
      orderings: ['default', 'name_en'],
      query: 'ordering=name_en&page_size=20&page=2',
      file: '/cities/name_en/20/2.json',
    },
    { orderings: ['default', 'name_en'], query: 'ordering=-name_en', file: null },
    { orderings: ['default', 'name_en'], query: 'page_size=50', file: '/cities/default/50/1.json' },
    { orderings: ['-name_ar'], query: 'ordering=-name_ar&page=3', file: '/cities/-name_ar/default/3.json' },
    { orderings: ['-name_ar'], query: 'page=2', file: null },
    { orderings: ['-name_ar'], query: '', file: null },
  ])('built orderings $orderings: $query → $file, as staticPathFor says', async ({ orderings, query, file }) => {
    const built = { ...settings, orderings, liveUrl: 'https://live.example.net' };
    const route = await netlifyMatcher(netlifyRedirects(built), join(root, 'extra._redirects'));
    const covered = staticPathFor(parseQuery(query), built);
    expect(covered && `/${covered}`).toBe(file);
    expect(route('/cities/', query)).toMatchObject({ to: file ?? 'https://live.example.net/cities/', status: 200 });
  });
});

// Netlify reads a `_redirects` or `_headers` path segment starting with `:` as a placeholder (any
// segment) and `*` as a wildcard (in `_redirects` a splat at a segment's end; in `_headers`
// anywhere in a segment, as @netlify/headers-parser's for_regexp.js builds it), and decodes no
// escape: a base path holding either cannot be written in them. A site for every host leaves them
// out and says so (another host, or `edge netlify`, needs neither); making them is refused.
describe("a base path Netlify's files would misread: the site leaves them out, said once; making them is refused", () => {
  const NETLIFY_FILES: readonly string[] = [ROUTES.extras.netlifyRedirects, ROUTES.extras.netlifyHeaders];
  /** What such a site holds of them: a _redirects that only hides the site's own files. */
  const HIDING: readonly string[] = [ROUTES.extras.netlifyRedirects];
  const data = join(KIT, 'cities11.csv');
  /** A build of cities11 into `out` for `baseUrl`, and the warnings it gave. */
  async function built(out: string, baseUrl: string, host?: 'cloudflare') {
    const warnings: string[] = [];
    const result = await build({ data, out, baseUrl, host, onWarning: (w) => warnings.push(w.reason) });
    return { result, warnings };
  }
  const held = (out: string) => NETLIFY_FILES.filter((name) => existsSync(join(out, name)));
  const listed = async (out: string) => Object.keys((await readManifest(out))!.files);
  let plain: string;
  beforeAll(async () => {
    plain = join(root, 'misread-plain');
    await built(plain, 'https://x.example/v1/api');
  });

  it("why: Netlify's engine reads /:v1/ as any segment, and the escape /%3Av1/ as no path a browser sends", async () => {
    const placeholder = await netlifyMatcher(
      '/:v1/api/cities/  /one.json  200!\n',
      join(root, 'placeholder._redirects'),
    );
    expect(placeholder('/v2/api/cities/', '')).toMatchObject({ to: '/one.json' });
    const escaped = await netlifyMatcher('/%3Av1/api/cities/  /one.json  200!\n', join(root, 'escaped._redirects'));
    expect(escaped('/:v1/api/cities/', '')).toBeNull();
    const splat = await netlifyMatcher('/v1*/cities/  /one.json  200!\n', join(root, 'splat._redirects'));
    expect(splat('/v1-other/cities/', '')).toMatchObject({ to: '/one.json' });
  });

  it.each([
    ['a segment that is a placeholder', 'https://x.example/:v1/api', ':v1', 'a placeholder'],
    [
      'a placeholder percent-encoded (decoded, as requests are matched)',
      'https://x.example/%3Av1/api',
      ':v1',
      'a placeholder',
    ],
    ['a wildcard ending a segment', 'https://x.example/api/v1*', 'v1*', 'a wildcard'],
    ['a wildcard inside a segment, the URL ending in a slash', 'https://x.example/a*b/', 'a*b', 'a wildcard'],
    ['a lone wildcard', 'https://x.example/*/api', '*', 'a wildcard'],
    ['a space (Netlify splits a rule on white space)', 'https://x.example/a%20b', 'a\\u{20}b', 'the end of the path'],
    ['a no-break space', 'https://x.example/a%C2%A0b', 'a\\u{a0}b', 'the end of the path'],
    ['a line end (another rule)', 'https://x.example/a%0Ab/api', 'a\\u{a}b', 'the end of the path'],
  ])(
    "%s (%s): a default build succeeds, leaves out _headers and the endpoint's rules (_redirects only hides the site's own files), and says once which segment, why and what to do",
    async (name, baseUrl, segment, as) => {
      const out = join(root, `misread-${name.replace(/\W+/g, '-')}`);
      const { warnings } = await built(out, baseUrl);
      expect(held(out)).toEqual(HIDING);
      // Through Netlify's own engine: the site's own files answered as absent, the edge data and the endpoint untouched.
      const spec = testSpec({ baseUrl });
      const route = await netlifyMatcher(
        await readFile(join(out, ROUTES.extras.netlifyRedirects), 'utf8'),
        join(root, `hiding-${name.replace(/\W+/g, '-')}._redirects`),
      );
      for (const hidden of [ROUTES.extras.manifest, ROUTES.extras.dataset, ROUTES.extras.cloudfront])
        expect(route(`/${hidden}`, ''), hidden).toMatchObject({ status: 404 });
      expect(route(`${spec.mount}/cities/`, 'page=2')).toBeNull();
      expect(route(`/${ROUTES.edge.index}`, '')).toBeNull();
      expect(warnings).toHaveLength(1);
      for (const part of [`path segment "${segment}"`, `as ${as}`, 'no escape', 'cities-api edge netlify', '`baseUrl`'])
        expect(warnings[0]).toContain(part);
      // Everything else as a site of a base path Netlify can hold has it, and its manifest lists only what it holds.
      expect(await listed(out)).toEqual((await listed(plain)).filter((path) => path !== ROUTES.extras.netlifyHeaders));
      expect(await listed(out)).toEqual(
        (await readdir(out, { recursive: true, withFileTypes: true }))
          .filter((e) => e.isFile() && !/\.(gz|br)$/.test(e.name) && !e.name.endsWith('.stat-cache'))
          .map((e) => relative(out, join(e.parentPath, e.name)).split(sep).join('/'))
          .filter((path) => path !== ROUTES.extras.manifest)
          .sort(),
      );
      // Making them is still refused, saying the same.
      for (const make of [netlifyRedirects, netlifyHeaders])
        expect(() => make(testSpec({ baseUrl }))).toThrow(
          expect.objectContaining({ exitCode: 2, message: expect.stringContaining(`path segment "${segment}"`) }),
        );
      expect(() => netlifyRedirects(testSpec({ baseUrl }))).toThrow('cities-api edge netlify');
    },
  );

  it.each([
    ['a default build of a base path Netlify can hold', NETLIFY_FILES, 'https://x.example/v1/api', undefined],
    [
      'a default build of a colon inside a segment (Netlify reads it as text)',
      NETLIFY_FILES,
      'https://x.example/a:b/api',
      undefined,
    ],
    [
      'a build --for cloudflare of a placeholder (it holds no Netlify files whatever its path)',
      [],
      'https://x.example/:v1/api',
      'cloudflare',
    ],
  ] as const)('%s: the site holds %j, and nothing is said', async (name, files, baseUrl, host) => {
    const out = join(root, `held-${name.replace(/\W+/g, '-')}`);
    const { warnings } = await built(out, baseUrl, host);
    expect(held(out)).toEqual(files);
    expect(warnings).toEqual([]);
    expect((await readManifest(out))?.settings.baseUrl).toBe(baseUrl);
  });

  it('a rebuild with the same settings is up to date: nothing rewritten, the same warning', async () => {
    const out = join(root, 'misread-again');
    const first = await built(out, 'https://x.example/:v1/api');
    const again = await built(out, 'https://x.example/:v1/api');
    expect(again.result).toMatchObject({ upToDate: true, written: 0, removed: 0, files: first.result.files });
    expect(again.warnings).toEqual(first.warnings);
    expect(held(out)).toEqual(HIDING);
  });

  it('rebuilt with such a base path, a site loses its endpoint rules; rebuilt with a plain one, it has them again', async () => {
    const out = join(root, 'misread-switch');
    const before = await built(out, 'https://x.example/v1/api');
    expect(held(out)).toEqual(NETLIFY_FILES);
    const without = await built(out, 'https://x.example/:v1/api');
    expect(held(out)).toEqual(HIDING);
    expect(without.result.files).toBe(before.result.files - 1);
    expect(await listed(out)).not.toContain(ROUTES.extras.netlifyHeaders);
    // Its rules: only the three hiding the site's own files.
    const rules = (await readFile(join(out, ROUTES.extras.netlifyRedirects), 'utf8')).split('\n');
    expect(rules.filter((line) => line && !line.startsWith('#')).map((line) => line.split(/ +/)[0])).toEqual(
      [ROUTES.extras.manifest, ROUTES.extras.dataset, ROUTES.extras.cloudfront].map((path) => `/${path}`),
    );
    await built(out, 'https://x.example/v1/api');
    expect(held(out)).toEqual(NETLIFY_FILES);
  });

  it('built twice apart, such a site is the same: its manifest byte for byte', async () => {
    const [a, b] = ['misread-a', 'misread-b'].map((name) => join(root, name));
    for (const out of [a, b]) await built(out!, 'https://x.example/:v1/api');
    const manifest = (out: string) => readFile(join(out, ROUTES.extras.manifest), 'utf8');
    expect(await manifest(a!)).toBe(await manifest(b!));
  });

  it.each([
    ['a colon inside a segment', 'https://x.example/a:b/api', '/ax/api/cities/'],
    ['a colon ending a segment', 'https://x.example/v1:/api', '/v1x/api/cities/'],
  ])(
    "%s (%s) is Netlify's literal text: its endpoint reaches the files, no other path does",
    async (_, baseUrl, other) => {
      const spec = testSpec({ baseUrl });
      const route = await netlifyMatcher(netlifyRedirects(spec), join(root, 'colon._redirects'));
      expect(route(`${spec.mount}/cities/`, 'page=2')).toMatchObject({
        to: '/cities/default/default/2.json',
        status: 200,
      });
      expect(route(other, 'page=2')).toBeNull();
    },
  );

  // `edge netlify`'s function is routed by the regular expression @netlify/edge-bundler's manifest
  // makes of its config, tested on the request's path as Netlify's edge routing does
  // (@netlify/edge-functions-dev: `new RegExp(route.pattern).test(url.pathname)`). A `path` was a
  // URLPattern, where `:name` anywhere, `*` and groups are syntax, and which matched one spelling.
  const edgeRoutes = (baseUrl: string) => {
    // (Its `cache: 'manual'` is edge-bundler's Cache.Manual, an enum's string.)
    const config = netlifyEdgeConfig({ settings: testSpec({ baseUrl }) }) as unknown as Parameters<
      typeof mergeDeclarations
    >[1][string];
    const name = 'cities-api';
    const { manifest } = generateManifest({
      functions: [{ name, path: `/netlify/edge-functions/${name}/${name}.mjs` }],
      declarations: mergeDeclarations([], { [name]: config }, {}, []),
      userFunctionConfig: { [name]: config },
    });
    return [...manifest.routes, ...manifest.post_cache_routes].map((route) => new RegExp(route.pattern));
  };
  it.each<[string, string, string[], string]>([
    ['a placeholder segment', 'https://x.example/:v1/api', ['/:v1/api/cities/'], '/v2/api/cities/'],
    ['a colon inside a segment', 'https://x.example/a:b/api', ['/a:b/api/cities/'], '/ax/api/cities/'],
    ['a wildcard', 'https://x.example/a*b', ['/a*b/cities/'], '/axyzb/cities/'],
    ['a group', 'https://x.example/a(b)', ['/a(b)/cities/'], '/ab/cities/'],
    ['braces (percent-encoded in requests)', 'https://x.example/a{b}', ['/a%7Bb%7D/cities/'], '/ab/cities/'],
    ['a plus', 'https://x.example/a+b', ['/a+b/cities/'], '/aab/cities/'],
    [
      'brackets, as links write them and as URL parsers leave them',
      'https://x.example/a[b]',
      ['/a%5Bb%5D/cities/', '/a[b]/cities/'],
      '/ab/cities/',
    ],
    [
      '^ and |, as links write them and as URL parsers leave them',
      'https://x.example/a^b|c',
      ['/a%5Eb%7Cc/cities/', '/a^b|c/cities/'],
      '/abc/cities/',
    ],
    ['an escaped %, as links write it', 'https://x.example/50%25', ['/50%25/cities/'], '/50/cities/'],
    ['an escaped backslash, as links write it', 'https://x.example/a%5Cb', ['/a%5Cb/cities/'], '/a/b/cities/'],
    ['an escaped ?', 'https://x.example/a%3Fb', ['/a%3Fb/cities/'], '/ab/cities/'],
    ['a space', 'https://x.example/a%20b', ['/a%20b/cities/'], '/ab/cities/'],
    ['! at a segment start', 'https://x.example/!v1', ['/!v1/cities/'], '/v1/cities/'],
    ['an escaped non-ASCII character', 'https://x.example/caf%C3%A9', ['/caf%C3%A9/cities/'], '/caf/cities/'],
    // Django reads each of these as the endpoint (gunicorn decodes the path): so must Netlify route them.
    [
      'letters percent-encoded',
      'https://x.example/api',
      ['/%61pi/cities/', '/api/%63ities/', '/%61%70%69/cities/'],
      '/%61pix/cities/',
    ],
    [
      'hex in lower case',
      'https://x.example/caf%C3%A9',
      ['/caf%c3%a9/cities/', '/caf%C3%a9/cities/'],
      '/caf%c3%a8/cities/',
    ],
    [
      'a slash written %2F',
      'https://x.example/api/v1',
      ['/api%2Fv1/cities/', '/api/v1%2fcities/'],
      '/api%2Fv2/cities/',
    ],
    [
      'the path decoded, as Netlify reads paths for its rules',
      'https://x.example/caf%C3%A9',
      ['/café/cities/'],
      '/cafe/cities/',
    ],
    [
      'brackets decoded from their escapes',
      'https://x.example/a%5Bb%5D',
      ['/a[b]/cities/', '/a%5bb%5d/cities/'],
      '/ab/cities/',
    ],
    ['no base path', 'https://x.example', ['/cities/', '/%63ities/', '/citie%73/'], '/citiesx/'],
  ])(
    "the edge function's route with %s (%s) matches its endpoint in each spelling, and no other path",
    (_, baseUrl, own, other) => {
      const routes = edgeRoutes(baseUrl);
      const matched = (path: string) => routes.some((route) => route.test(path));
      for (const path of own) expect([path, matched(path), matched(path.slice(0, -1))]).toEqual([path, true, true]);
      expect([other, matched(other)]).toEqual([other, false]);
      expect(matched(`${own[0]}x`)).toBe(false);
    },
  );
});

// Netlify's engine reads no character of a rule's path as syntax but a segment's leading `:` and `*`
// (the table above), and matches the request's path decoded: a base path holding `[`, `^`, `|`,
// `%`, a non-ASCII letter... is written as that text, and matched however a client spells it.
describe("_redirects for a base path holding what URLs escape: Netlify's engine routes every spelling of it", () => {
  it.each([
    ['brackets', 'https://x.example/a[b]', '/a[b]', '/a%5Bb%5D', '/ab'],
    ['^ and |', 'https://x.example/a^b|c', '/a^b|c', '/a%5Eb%7Cc', '/abc'],
    ["a regular expression's syntax", 'https://x.example/a.b(c)+$', '/a.b(c)+$', '/a.b(c)%2B%24', '/axb(c)+$'],
    ['braces and a backtick', 'https://x.example/a{b}`', '/a%7Bb%7D%60', '/a%7bb%7d%60', '/ab'],
    ['an escaped %', 'https://x.example/50%25', '/50%25', '/50%25', '/50'],
    ['an escaped ?', 'https://x.example/a%3Fb', '/a%3Fb', '/a%3fb', '/ab'],
    ['an escaped #', 'https://x.example/a%23b', '/a%23b', '/a%23b', '/ab'],
    ['an escaped backslash', 'https://x.example/a%5Cb', '/a%5Cb', '/a%5cb', '/a/b'],
    ['a non-ASCII letter', 'https://x.example/café/v1', '/café/v1', '/caf%c3%a9/v1', '/cafe/v1'],
    ['a colon inside a segment', 'https://x.example/a:b', '/a:b', '/a%3Ab', '/ab'],
    ['a letter percent-encoded', 'https://x.example/api', '/api', '/%61pi', '/apx'],
  ])(
    '%s (%s): a covered query reaches its file, an uncovered one the live server; a neighbour no rule',
    async (name, baseUrl, typed, escaped, neighbour) => {
      const spec = testSpec({ baseUrl, pageSizes: [20], orderings: ['default'], liveUrl: 'https://live.example.net' });
      const route = await netlifyMatcher(
        netlifyRedirects(spec),
        join(root, `spelled-${name.replace(/\W+/g, '-')}._redirects`),
      );
      for (const mount of [typed, escaped]) {
        expect([mount, route(`${mount}/cities/`, 'page=2')]).toMatchObject([
          mount,
          { to: '/cities/default/default/2.json', status: 200 },
        ]);
        expect([mount, route(`${mount}/cities/`, 'page_size=7')]).toMatchObject([
          mount,
          { status: 200, to: expect.stringMatching(/^https:\/\/live\.example\.net\//) },
        ]);
      }
      expect(route(`${neighbour}/cities/`, 'page=2')).toBeNull();
    },
  );
});

describe('netlifyHeaders', () => {
  /** path → headers, read the way Netlify reads _headers: a path line, then indented `Name: value` lines. */
  function parseHeaders(text: string): Map<string, Record<string, string>> {
    const blocks = new Map<string, Record<string, string>>();
    let current: Record<string, string> | undefined;
    for (const line of text.split('\n')) {
      if (!line.trim() || line.startsWith('#')) continue;
      if (!line.startsWith(' ')) blocks.set(line, (current = {}));
      else {
        const colon = line.indexOf(':');
        current![line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
      }
    }
    return blocks;
  }

  it.each([
    { mount: '', paths: ['/cities/*'] },
    { mount: '/api/v1', paths: ['/api/v1/cities/*', '/cities/*'] },
  ])('mount "$mount": headers for $paths', ({ mount, paths }) => {
    const text = netlifyHeaders(
      testSpec({
        baseUrl: `https://cities.example.org${mount}`,
        count: 30,
        pageSizes: PAGE_SIZES,
        orderings: ALL_ORDERINGS,
      }),
    );
    expect(text).toBe(
      netlifyHeaders(
        testSpec({ baseUrl: `https://cities.example.org${mount}`, count: 7, pageSizes: [5], orderings: ['default'] }),
      ),
    );
    expect(text.startsWith('# Generated by cities-api')).toBe(true);
    const blocks = parseHeaders(text);
    expect([...blocks.keys()]).toEqual(paths);
    for (const headers of blocks.values()) {
      expect(headers).toMatchObject({
        'Content-Type': 'application/json',
        Allow: 'GET, POST, HEAD, OPTIONS',
        Vary: 'Accept',
        'Access-Control-Allow-Origin': '*',
        'Cache-Control': NETLIFY_CACHE_CONTROL,
      });
    }
  });
});

// _headers' paths as Netlify's own parser reads them (@netlify/headers-parser: a case-insensitive
// regular expression per path), matched against a request's path two ways: decoded, as Netlify
// matches requests (the _redirects engine's path), and as netlify dev matches _headers (its
// @netlify/headers: the URL's pathname, undecoded).
describe("_headers for a base path holding what URLs escape: the endpoint's headers however it is spelled", () => {
  it.each([
    ['brackets', 'https://x.example/a[b]', ['/a[b]', '/a%5Bb%5D', '/a%5bb%5d']],
    ['^ and |', 'https://x.example/a^b|c', ['/a^b|c', '/a%5Eb%7Cc']],
    ['braces and a backtick', 'https://x.example/a{b}`', ['/a%7Bb%7D%60', '/a%7bb%7d%60']],
    ['an escaped %', 'https://x.example/50%25', ['/50%25']],
    ['an escaped ?', 'https://x.example/a%3Fb', ['/a%3Fb', '/a%3fb']],
    ['a non-ASCII letter', 'https://x.example/café/v1', ['/café/v1', '/caf%C3%A9/v1', '/caf%c3%a9/v1']],
    ['a plain path', 'https://x.example/api/v1', ['/api/v1']],
  ] as const)('%s (%s)', async (name, baseUrl, spellings) => {
    const file = join(root, `spelled-${name.replace(/\W+/g, '-')}._headers`);
    await writeFile(file, netlifyHeaders(testSpec({ baseUrl, pageSizes: [20], orderings: ['default'] })));
    const { headers, errors } = await parseAllHeaders({ headersFiles: [file], configHeaders: [], minimal: false });
    expect(errors).toEqual([]);
    const rules = headers as { forRegExp: RegExp; values: Record<string, string> }[];
    const found = (path: string) =>
      Object.assign({}, ...rules.filter(({ forRegExp }) => forRegExp.test(path)).map(({ values }) => values));
    for (const spelling of spellings) {
      const pathname = new URL(`${spelling}/cities/`, 'https://example.netlify.app').pathname;
      for (const [how, path] of [
        ['decoded', decodeURIComponent(pathname)],
        ['netlify dev', pathname],
      ] as const)
        expect([spelling, how, found(path)]).toEqual([
          spelling,
          how,
          expect.objectContaining({ 'Content-Type': 'application/json', Vary: 'Accept' }),
        ]);
    }
    expect(found('/x/cities/')).toEqual({});
  });
});

describe("Netlify's config is part of the site, and holds no fact of the data", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-netlify-stale-')));
  afterAll(() => cleanup());

  it('rebuilt from another dataset, _redirects and _headers are byte for byte the same; with other page sizes, the rebuild rewrites them', async () => {
    const site = join(root, 'site');
    const files = async () => Promise.all(['_redirects', '_headers'].map((name) => readFile(join(site, name), 'utf8')));
    const buildFrom = (name: string, pageSizes: number[]) =>
      build({
        data: join(KIT, `${name}.csv`),
        out: site,
        baseUrl: 'http://api.example.com',
        collation: 'codepoint',
        pageSizes,
        compress: false,
      });
    await buildFrom('cities11', PAGE_SIZES);
    const eleven = await files();
    await buildFrom('cities48', PAGE_SIZES);
    expect(await files()).toEqual(eleven);
    await buildFrom('cities11', PAGE_SIZES);
    expect(await files()).toEqual(eleven);
    await buildFrom('cities48', [5, 50]);
    const [redirects] = await files();
    expect(redirects).not.toBe(eleven[0]);
    expect(redirects).toContain('page_size=50');
    expect(redirects).not.toContain('page_size=20 ');
  });
});
