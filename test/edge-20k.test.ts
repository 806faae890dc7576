import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAME_FIELDS } from '../src/core/fields.js';
import { detailJson } from '../src/core/json-text.js';
import { ROUTES } from '../src/core/route-table.js';
import { NETLIFY_CDN_CACHE_CONTROL } from '../src/hosts/netlify.js';
import { runBounded } from '../src/fs/run-bounded.js';
import { decideRoute } from '../src/http/route.js';
import type { LambdaEvent, LambdaResult } from '../src/platforms/lambda/adapter.js';
import {
  LAMBDA_STREAM_LIMIT,
  LAMBDA_STREAM_PAGE_CITIES,
  type AwsLambdaRuntime,
} from '../src/platforms/lambda/streaming.js';
import { SIX_MB_PAGE_CITIES } from '../src/platforms/response-limit.js';
import { NETLIFY_STREAM_LIMIT, NETLIFY_STREAM_PAGE_CITIES } from '../src/platforms/netlify/adapter.js';
import { EDGE_PAGE_CITIES, PageTooLarge } from '../src/site/edge-source.js';
import { siteSpec, type SiteSpec } from '../src/site/spec.js';
import { readManifestHead } from '../src/store/manifest-file.js';
import { cli } from './cli-helpers.js';
import { DENO, denoServe, kitCopies } from './edge-helpers.js';
import { DISK_TMPDIR, tempDir } from './helpers.js';
import { functionUrl, PYTHON, STAND_IN, streamingFunctionUrl, unpack, type StreamHandler } from './lambda-front.js';
import { denoForNetlifyDev, netlifyDev } from './netlify-dev.js';
import { rawRequest, startCli } from './serve-helpers.js';
import { requireTool } from './tool-check.js';

// Issue #25's "done when": one site of about 21,000 cities with every ordering (the 16 name
// fields both ways and the default), built once as the Deno, Lambda and Netlify guides build it
// (`cities-api build`; `--compression none` as docs/netlify.md builds: the edge functions never
// read a .gz/.br) but for its page sizes: `--page-sizes 100`, so every page of each ordering at the
// default page size and at 100 is a file (covered), and 20 and 50, which a default build would
// hold too, are computed (uncovered). A default build here is 195k files (2.8 GB), this one 77k;
// which page sizes are files is the site's spec, read the same way for any list (the kit covers a
// default build's four on each runtime at 48 cities). The site is built on tmpfs (TMPDIR): its
// build took 36.6 CPU-s there (5.9 in the kernel), 45.6 on the disk (15.7). Deno reads nothing on tmpfs, so its
// project runs from a copy on the disk beside the site's files it reads: the edge data and
// openapi.json (it computes every page from the edge data and never reads a page file: one it
// asked for would be missing there, and its answer would differ from serve's).
// Its project written by `cities-api edge` for
// each platform, each real runtime started once: `deno serve`, Lambda from function.zip (the
// buffered handler and the streaming one, behind a function URL stand-in), Netlify's local runtime
// (@netlify/dev, its edge function on Deno). Every answer is `cities-api serve`'s on the same site,
// byte for byte (status, body, Content-Type; the ETag of a computed answer), but where the
// platform documents a hard limit, where it must be the clear error the code gives. workerd has its
// own test at this size (edge-cloudflare-budget: a site built --for cloudflare).

const NETLIFY_DEV = join(import.meta.dirname, '..', 'node_modules', '@netlify', 'dev', 'package.json');
const available = [
  requireTool('deno', DENO, 'npm ci (deno is a dev dependency)'),
  requireTool('python3 (to unpack the zip)', PYTHON, 'apt-get install -y python3'),
  requireTool('@netlify/dev', NETLIFY_DEV, 'npm ci (@netlify/dev is a dev dependency)'),
].every(Boolean);

const COPIES = 17;
const BASE_URL = 'https://api.example.org';
const INDENT = 'application/json; indent=2';
const NETLIFY_PARALLEL = 2;
/** The page size the site holds files for besides the default one (10). */
const PAGE_SIZE = 100;

interface Answer {
  readonly status: number;
  readonly type: string | null;
  readonly etag: string | null;
  readonly cdnCache: string | null;
  readonly body: Buffer;
}

interface Runtime {
  readonly name: string;
  readonly url: string;
  /** The most cities a page may hold there: compact JSON streamed, and a page assembled whole (format=api, indented JSON). */
  readonly streamed: number;
  readonly assembled: number;
  /** What the clear error of a streamed page over its cap says it is (PageTooLarge's `why`), where not the default. */
  readonly streamedWhy?: string;
  /** Whether it answers a covered query with the site's file (no cap: the file is sent as it is). */
  readonly sendsFiles?: true;
  /** The limit's source, for the reader. */
  readonly limit: string;
  /** Queries asked at once. */
  readonly parallel: number;
  /** Whether it computes in this process (the Lambda stand-ins). */
  readonly inProcess?: true;
}

let root: string;
const cleanups: (() => Promise<void>)[] = [];
let count: number;
let spec: SiteSpec;
const runtimes: Runtime[] = [];
/** Netlify's answers to QUERIES, in order, as the byte-for-byte table got them. */
let netlifyAnswers: Answer[] | undefined;
let serveUrl: string;
const stops: (() => Promise<unknown>)[] = [];
const timings: string[] = [];

const timed = async <T>(what: string, work: Promise<T>): Promise<T> => {
  const started = performance.now();
  const result = await work;
  timings.push(`${what} ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
};

beforeAll(async () => {
  const made = await tempDir('cities-edge-20k-');
  root = made.dir;
  cleanups.push(made.cleanup);
  if (!available) return;
  const cities = await kitCopies(COPIES);
  count = cities.length;
  await writeFile(join(root, 'cities.json'), JSON.stringify(cities));
  const built = await timed(
    'build',
    cli(
      root,
      'build',
      '--data',
      'cities.json',
      '--site',
      'site',
      '--base-url',
      BASE_URL,
      '--compression',
      'none',
      '--page-sizes',
      String(PAGE_SIZE),
    ),
  );
  expect(built).toMatchObject({ code: 0 });
  const site = join(root, 'site');
  spec = siteSpec((await readManifestHead(site))!.settings, count);
  /** Writes a platform's project; the deploy command it prints (`deploy: cd DIR && COMMAND`). */
  const edge = (platform: string, project: string) =>
    cli(root, 'edge', platform, '--site', 'site', '--project', project).then((r) => {
      expect(r, `edge ${platform}`).toMatchObject({ code: 0, stderr: '' });
      return /^deploy: (?:cd \S+ && )?(.+)$/m.exec(r.stdout)![1]!;
    });
  // Netlify publishes a directory of its project: the project is the root, holding the site.
  const [denoCommand] = await timed(
    'edge deno, lambda, netlify',
    Promise.all([edge('deno', 'deno'), edge('lambda', 'lambda'), edge('netlify', '.')]),
  );
  // Deno's project and the files of the site it reads, copied to the disk (coreutils' cp), as the project and site sit in root.
  const disk = await tempDir('cities-edge-20k-deno-', DISK_TMPDIR);
  cleanups.push(disk.cleanup);
  await mkdir(join(disk.dir, 'site', ROUTES.file.meta), { recursive: true });
  const copies = [
    ['deno', ''],
    [join('site', ROUTES.edge.dir), join('site', ROUTES.file.meta)],
    [join('site', ROUTES.extras.openapi), 'site'],
  ];
  await timed(
    'copy to the disk',
    Promise.all(
      copies.map(([from, into]) => promisify(execFile)('cp', ['-R', join(root, from!), join(disk.dir, into!)])),
    ),
  );
  const denoBin = await denoForNetlifyDev(join(root, 'bin'));
  const lambda = await unpack(join(root, 'lambda'));
  (globalThis as { awslambda?: AwsLambdaRuntime }).awslambda = STAND_IN;
  const entry = (await import(pathToFileURL(join(lambda, 'index.mjs')).href)) as {
    handler: (event: LambdaEvent) => Promise<LambdaResult>;
    streamingHandler: StreamHandler;
  };
  const closed = (s: { url: string; server: Server }) => ({
    url: s.url,
    stop: () => new Promise((resolve) => s.server.close(resolve)),
  });
  const start = async (
    server: Promise<{ url: string; stop: () => Promise<unknown> }>,
    runtime: Omit<Runtime, 'url'>,
  ) => {
    const { url, stop } = await server;
    stops.push(stop);
    runtimes.push({ ...runtime, url });
  };
  const sixMb = { streamed: SIX_MB_PAGE_CITIES, assembled: SIX_MB_PAGE_CITIES };
  await timed(
    'start serve, deno serve, Lambda (both), @netlify/dev',
    Promise.all([
      startCli([site, '--port', '0', '--quiet', '--no-preview-pages']).then((s) => {
        stops.push(s.stop);
        serveUrl = s.url;
      }),
      start(denoServe(join(disk.dir, 'deno'), denoCommand), {
        name: 'deno serve',
        streamed: Infinity,
        assembled: EDGE_PAGE_CITIES,
        limit: 'an isolate',
        parallel: 8,
      }),
      start(functionUrl(entry.handler).then(closed), {
        name: 'Lambda, buffered',
        ...sixMb,
        limit: "Lambda's 6 MB response",
        parallel: 8,
        inProcess: true,
      }),
      start(streamingFunctionUrl(entry.streamingHandler).then(closed), {
        name: 'Lambda, streamed',
        streamed: LAMBDA_STREAM_PAGE_CITIES,
        streamedWhy: LAMBDA_STREAM_LIMIT.why,
        assembled: LAMBDA_STREAM_PAGE_CITIES,
        limit: "Lambda's 200 MB streamed response",
        parallel: 8,
        inProcess: true,
      }),
      // @netlify/dev serves the function's own reads of the edge files from this process: a few at once (see the closing note).
      start(netlifyDev(root, { edgeFunctions: true, denoBin }), {
        name: 'Netlify (@netlify/dev)',
        streamed: NETLIFY_STREAM_PAGE_CITIES,
        streamedWhy: NETLIFY_STREAM_LIMIT.why,
        sendsFiles: true,
        assembled: SIX_MB_PAGE_CITIES,
        limit: 'a page assembled whole',
        parallel: NETLIFY_PARALLEL,
      }),
    ]),
  );
  // @netlify/dev's first answers here are slow (its Deno and static server warming up, on a shared machine): one query
  // first, until it answers, so the table does not time out the function's 10-second edge file reads.
  const netlify = runtimes.find((r) => r.name.startsWith('Netlify'))!;
  await timed(
    "Netlify's first answer",
    (async () => {
      for (let tries = 1; ; tries++) {
        const { status } = await ask(netlify.url, 'page_size=1', '*/*');
        if (status === 200) return timings.push(`(${tries} tries)`);
        if (tries === 5) throw new Error(`@netlify/dev answered ${status} 5 times`);
      }
    })(),
  );
}, 900_000);
afterAll(async () => {
  delete (globalThis as { awslambda?: AwsLambdaRuntime }).awslambda;
  await Promise.all(stops.map((stop) => stop()));
  await Promise.all(cleanups.map((cleanup) => cleanup()));
  if (available) console.log(`edge-20k at ${count} cities: ${timings.join(', ')}`);
});

/** A query's answer, on a connection of its own (rawRequest's `fresh`: on a loaded machine a kept-alive one was reset). */
const ask = async (base: string, query: string, accept: string): Promise<Answer> => {
  const { status, headers, body } = await rawRequest(`${base}/cities/?${query}`, { headers: { accept }, fresh: true });
  const header = (name: string) => {
    const value = headers[name.toLowerCase()];
    return value === undefined ? null : String(value);
  };
  return {
    status,
    type: header(ROUTES.header.contentType),
    etag: header(ROUTES.header.etag),
    cdnCache: header(ROUTES.header.netlifyCdnCacheControl),
    body,
  };
};

const [first, second] = NAME_FIELDS;
type Kind = 'covered' | 'uncovered' | 'page_size ≥ count' | 'invalid';
/** [what it checks, its kind (checked against the site's spec), the query (`COUNT`: the number of cities), Accept]. */
const QUERIES: readonly (readonly [string, Kind, string, string])[] = [
  ['the first page, default ordering', 'covered', '', '*/*'],
  ['the last page, default ordering', 'covered', 'page=2098', '*/*'],
  ...NAME_FIELDS.flatMap((field, i) => [
    [`a middle page of ${field}`, 'covered', `ordering=${field}&page=${300 + i * 40}`, '*/*'] as const,
    [
      `the last page of -${field}`,
      'covered',
      `ordering=-${field}&${['', `page_size=${PAGE_SIZE}&`][i % 2]}page=last`,
      '*/*',
    ] as const,
  ]),
  [`a middle page of page_size=${PAGE_SIZE}`, 'covered', `ordering=${second}&page_size=${PAGE_SIZE}&page=100`, '*/*'],
  ['indented JSON of a page a file holds compact', 'uncovered', `ordering=-${first}&page=1000`, INDENT],
  [
    "a default build's page size this site does not hold, middle page",
    'uncovered',
    `ordering=${first}&page_size=20&page=700`,
    '*/*',
  ],
  [
    "a default build's page size this site does not hold, last page",
    'uncovered',
    'ordering=-name_it&page_size=50&page=last',
    '*/*',
  ],
  ['the default page size asked by name (page_size=10)', 'uncovered', 'ordering=name_ru&page_size=10&page=3', '*/*'],
  ['an uncovered page size, first page', 'uncovered', 'page_size=7', '*/*'],
  ['an uncovered page size, middle page', 'uncovered', `ordering=-${second}&page_size=33&page=300`, '*/*'],
  ['an uncovered page size, last page', 'uncovered', 'ordering=name_tr&page_size=7&page=2997', '*/*'],
  ['a multi-field ordering', 'uncovered', 'ordering=name_en,-name_ar&page=3', '*/*'],
  ['a multi-field ordering, deep', 'uncovered', 'ordering=-name_de,name_fr,-name_ru&page_size=100&page=150', '*/*'],
  ['-top (an ordering DRF drops: the default order)', 'uncovered', 'ordering=-top&page=5', '*/*'],
  ['-top before a field', 'uncovered', 'ordering=-top,name_hi&page_size=20&page=2', '*/*'],
  ['format=api', 'uncovered', 'ordering=name_it&page_size=3&format=api', '*/*'],
  ['indented JSON of an uncovered page', 'uncovered', 'ordering=name_ms,-name_pt&page_size=9&page=4', INDENT],
  ['page_size = count, default ordering', 'page_size ≥ count', 'page_size=COUNT', '*/*'],
  ['page_size = count, a name field descending', 'page_size ≥ count', 'ordering=-name_fa&page_size=COUNT', '*/*'],
  ['page_size > count, multi-field', 'page_size ≥ count', 'ordering=name_sp,-name_id&page_size=1000000', '*/*'],
  ['page_size > count, indented', 'page_size ≥ count', 'ordering=name_ur&page_size=COUNT1', INDENT],
  ['page_size = count, format=api', 'page_size ≥ count', 'ordering=-name_uk&page_size=COUNT&format=api', '*/*'],
  ['a page past the last', 'invalid', 'page=99999', '*/*'],
  ['a page past the last, uncovered', 'invalid', 'ordering=name_en,-name_ar&page_size=7&page=3000', '*/*'],
  ['page 2 of page_size = count', 'invalid', 'page_size=COUNT&page=2', '*/*'],
  ['page=0', 'invalid', 'ordering=name_ch&page=0', '*/*'],
  ['page=abc', 'invalid', 'page=abc&page_size=7', '*/*'],
];

const queryOf = (query: string) => query.replace('COUNT1', String(count + 1)).replace('COUNT', String(count));

/** Whether the site's spec gives the query a file (serve's and Netlify's answer), or its answer is computed. */
const isFile = (query: string, accept: string) =>
  decideRoute({ method: 'GET', target: `/cities/?${query}`, accept }, { spec }).kind === 'static';

/** The kind of a query, as the site's spec and serve's answer say. */
function kindOf(query: string, want: Answer, accept: string): Kind {
  if (want.status === 404) return 'invalid';
  if (Number(new URLSearchParams(query).get('page_size') ?? 0) >= count) return 'page_size ≥ count';
  return isFile(query, accept) ? 'covered' : 'uncovered';
}

/** What `runtime` must answer instead of serve's `want`: serve's, or the clear error of its documented page limit. */
function expected(runtime: Runtime, query: string, accept: string, want: Answer): { status: number; body: Buffer } {
  const pairs = new URLSearchParams(query);
  const size = Number(pairs.get('page_size') ?? 10);
  const page = Number(pairs.get('page') ?? 1);
  const cities = want.status === 200 && Number.isInteger(page) ? Math.min(size, count - (page - 1) * size) : 0;
  const assembled = pairs.get('format') === 'api' || accept === INDENT;
  const cap = assembled ? runtime.assembled : runtime.streamed;
  if (cities <= cap || (runtime.sendsFiles && isFile(query, accept))) return want;
  const error = new PageTooLarge(cities, cap, ...(assembled || !runtime.streamedWhy ? [] : [runtime.streamedWhy]));
  return { status: 500, body: Buffer.from(detailJson(error.message)) };
}

describe.skipIf(!available)(`${COPIES * 1234} cities, every ordering, on every edge runtime: serve's answers`, () => {
  it(`the site has every ordering, and a file for each page of the default page size and of ${PAGE_SIZE}`, () => {
    expect({ orderings: spec.orderings.length, pageSizes: spec.pageSizes, default: spec.defaultPageSize }).toEqual({
      orderings: 1 + 2 * NAME_FIELDS.length,
      pageSizes: [PAGE_SIZE],
      default: 10,
    });
  });

  it("every runtime answers each query as serve does, byte for byte (or the platform's documented limit)", async () => {
    const started = performance.now();
    const queries = QUERIES.map(([name, kind, raw, accept]) => ({ name, kind, query: queryOf(raw), accept }));
    /** Each server's answers, in the table's order. */
    const answersOf = async (url: string, parallel: number) => {
      const answers: Answer[] = [];
      await runBounded(
        queries.map((q, i) => [q, i] as const),
        async ([{ query, accept }, i]) => void (answers[i] = await ask(url, query, accept)),
        parallel,
      );
      return answers;
    };
    // The Lambda stand-ins compute in this process, where @netlify/dev also answers its edge function's reads of
    // the edge files, so Lambda's work (pages of every city among it) delays those reads: all asked at once on a
    // loaded machine (load 13), two of Netlify's answers were its 10-second read limit's 500. So serve, Deno and
    // Netlify first, then Lambda's two.
    const answered = new Map<Runtime, Answer[]>();
    const askAll = (group: Runtime[]) =>
      Promise.all(group.map(async (r) => answered.set(r, await answersOf(r.url, r.parallel))));
    const [wanted] = await Promise.all([answersOf(serveUrl, 8), askAll(runtimes.filter((r) => !r.inProcess))]);
    await askAll(runtimes.filter((r) => r.inProcess));
    const gotten = runtimes.map((r) => answered.get(r)!);
    netlifyAnswers = gotten[runtimes.findIndex((r) => r.name.startsWith('Netlify'))];
    const rows = queries.map((q, i) => ({ ...q, want: wanted![i]!, got: gotten.map((answers) => answers[i]!) }));
    timings.push(
      `${QUERIES.length} queries × ${runtimes.length + 1} servers ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const differing: string[] = [];
    for (const { name, kind, query, accept, want, got } of rows) {
      expect(
        kindOf(query, want, accept),
        `${name}: ?${query}, serve answered ${want.status} ${want.body.subarray(0, 100)}`,
      ).toBe(kind);
      got.forEach((answer, i) => {
        const runtime = runtimes[i]!;
        const should = expected(runtime, query, accept, want);
        const same =
          answer.status === should.status &&
          answer.body.equals(should.body) &&
          answer.type === (should === want ? want.type : ROUTES.contentType.json);
        if (!same)
          differing.push(
            `${runtime.name}, ${name} (?${query}): ${answer.status} ${answer.type} ${answer.body.subarray(0, 100)}, wanted ${should.status}${should === want ? '' : ` (${runtime.limit})`} ${should.body.subarray(0, 100)}`,
          );
        // A computed answer's ETag is serve's on every platform; a covered one is each platform's file's.
        if (should === want && want.status === 200 && !isFile(query, accept) && answer.etag !== want.etag)
          differing.push(`${runtime.name}, ${name} (?${query}): ETag ${answer.etag}, serve's ${want.etag}`);
      });
    }
    expect(differing).toEqual([]);
  }, 600_000);

  // Netlify's answers to the table above (each query once: at this size a page through @netlify/dev costs seconds).
  it("Netlify's CDN may keep each 200 (Netlify-CDN-Cache-Control), never an error", () => {
    expect(netlifyAnswers?.length, "the table's queries were asked of Netlify first").toBe(QUERIES.length);
    const marked = netlifyAnswers!.map((answer) => [answer.status, answer.cdnCache === NETLIFY_CDN_CACHE_CONTROL]);
    expect(marked.filter(([status, kept]) => (status === 200) !== kept)).toEqual([]);
    // Among them a 404 (an invalid page) and a 500 (a page over its cap), neither kept.
    expect(new Set(marked.map(([status]) => status))).toEqual(new Set([200, 404, 500]));
  });
});
