import http from 'node:http';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { build } from '../src/app/build.js';
import { writeEdgeProject, type EdgeProject, type Platform } from '../src/app/edge-project.js';
import { parseQuery, quotePlus } from '../src/core/query-string.js';
import { endpointPath } from '../src/core/route-table.js';
import { DEFAULT_PAGE_SIZES } from '../src/site/spec.js';
import { queryForFile } from '../src/site/layout.js';
import { readManifest } from '../src/store/manifest-file.js';
import { expect, inject } from 'vitest';
import { mountOf } from '../src/core/url-path.js';
import { newestInput, withLock } from './build-on-demand.js';
import { KIT, makeCity, testSpec } from './helpers.js';
import { following, printed, whenReady } from './started-process.js';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { Into } from '../src/site/byte-pool.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { edgeFiles } from '../src/site/edge-files.js';
import { NAME_FIELDS, type City } from '../src/core/fields.js';
import { readDataset } from '../src/dataset/read-dataset.js';

// The edge runtime tests' shared steps: a kit dataset's site built as the serve kit test builds it,
// its edge project written by `cities-api edge`'s own function, and every page file with its query.

export async function kitEdgeProject(
  root: string,
  name: string,
  baseUrl: string,
  platform: Platform,
  dir = name,
  out = join(root, dir, platform),
): Promise<{ site: string; project: EdgeProject }> {
  const site = join(root, dir, 'site');
  await copyKitSite(name, baseUrl, site);
  return { site, project: await writeEdgeProject(platform, site, out) };
}

/**
 * The run's shared kit site (kitSite) copied to `site` (replacing what is there), for a case that
 * writes into its site or beside it (an edge project, a page changed): the same files as
 * buildKitSite writes, by coreutils' cp, which takes a tenth of the CPU of building them
 * (cities1234: 11,758 files, 0.5 CPU-s against 5; Node's fs.cp took 5).
 */
export async function copyKitSite(name: string, baseUrl: string, site: string): Promise<void> {
  const shared = await kitSite(name, baseUrl);
  await rm(site, { recursive: true, force: true });
  await mkdir(dirname(site), { recursive: true });
  await promisify(execFile)('cp', ['-R', shared, site]);
}

/** A Lambda project in root/dir for the run's shared kit site (kitSite): the project only reads the site (into its zip). */
export async function kitLambdaProject(
  root: string,
  name: string,
  baseUrl: string,
  dir: string,
): Promise<{ site: string; project: EdgeProject }> {
  const site = await kitSite(name, baseUrl);
  return { site, project: await writeEdgeProject('lambda', site, join(root, dir)) };
}

/**
 * A real-sized dataset: the kit's 1,234 real multilingual cities `copies` times, every name of
 * each copy but the first its own (`Paris 3`), so that every ordering has its layout and no tie.
 */
export async function kitCopies(copies: number): Promise<City[]> {
  const kit = (await readDataset(join(KIT, 'cities1234.json'))).toCities();
  return Array.from({ length: copies }, (_, copy) =>
    kit.map((c) => ({
      ...c,
      id: c.id + copy * 100_000,
      ...(copy ? Object.fromEntries(NAME_FIELDS.map((f) => [f, `${c[f]} ${copy}`])) : {}),
    })),
  ).flat();
}

/** A kit dataset's site built (or rebuilt) in `site` as the serve kit test builds it. */
export function buildKitSite(site: string, name: string, baseUrl: string): Promise<unknown> {
  return build({
    data: join(KIT, `${name}.csv`),
    out: site,
    baseUrl,
    collation: 'codepoint',
    pageSizes: DEFAULT_PAGE_SIZES,
    compress: false,
  });
}

/**
 * A kit dataset's site as buildKitSite builds it, shared by the files of this run's tier (built by the
 * first that asks, under a lock; test/kit-sites.ts): read it in place, never change it (build your own).
 */
export async function kitSite(name: string, baseUrl: string): Promise<string> {
  // The sources' newest time too: a watch-mode rerun after an edit of src/ builds the site again.
  const inputs = `${baseUrl}\n${newestInput().time}`;
  const key = `${name}-${createHash('sha256').update(inputs).digest('hex').slice(0, 16)}`;
  const sites = inject('kitSites');
  if (!sites) throw new Error('kitSite: no kit-sites directory (test/kit-sites.ts is not a globalSetup of this tier)');
  const site = join(sites, key);
  const done = `${site}.built`;
  return withLock(`${site}.lock`, async () => {
    if (!existsSync(done)) {
      // A file that died mid-build left a partial site: built again from nothing.
      await rm(site, { recursive: true, force: true });
      await buildKitSite(site, name, baseUrl);
      await writeFile(done, '');
    }
    return site;
  });
}

/** Every page file of a built site, with the request target (on the site's mount) it answers. */
export async function pageTargets(site: string, mount: string): Promise<{ file: string; target: string }[]> {
  const manifest = (await readManifest(site))!;
  const pages: { file: string; target: string }[] = [];
  for (const file of Object.keys(manifest.files)) {
    const pairs = queryForFile(`/${file}`, []);
    if (!pairs) continue;
    const query = pairs.map(([k, v]) => `${quotePlus(k)}=${quotePlus(v)}`).join('&');
    pages.push({ file, target: `${endpointPath(mount)}${query ? `?${query}` : ''}` });
  }
  return pages;
}

/** Fetches every page's target from `url` (a few at a time) and lists those whose bytes differ from the file. */
export async function pagesDiffering(
  url: string,
  site: string,
  pages: readonly { file: string; target: string }[],
  fetchPage: (target: string) => Promise<Uint8Array> = async (t) =>
    new Uint8Array(await (await fetch(new URL(t, url))).arrayBuffer()),
): Promise<string[]> {
  const differing: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < pages.length) {
      const { file, target } = pages[next++]!;
      const [got, want] = await Promise.all([fetchPage(target), readFile(join(site, file))]);
      if (!Buffer.from(got).equals(want)) differing.push(`${target} (${file})`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return differing;
}

/** Asks `url` for every page of `site` (built for `baseUrl`), counts them in `totals`, and expects each to equal its file byte for byte (as `differing` compares them). */
export async function expectPagesAsFiles(
  url: string,
  site: string,
  baseUrl: string,
  totals: { pages: number },
  differing: typeof pagesDiffering = pagesDiffering,
): Promise<{ file: string; target: string }[]> {
  const pages = await pageTargets(site, mountOf(baseUrl));
  totals.pages += pages.length;
  expect(await differing(url, site, pages)).toEqual([]);
  return pages;
}

/** A site's edge files in memory (large tie groups in blocks of `fine` bytes where given, as for Cloudflare), and every path read from them. */
export function memoryEdgeSite(index: CityIndex, tag = '00112233445566ff', fine?: number) {
  return countedEdgeSite(
    new Map([...edgeFiles(index, tag, fine)].map((f) => [f.path, new Uint8Array(bodyBytes(f.body))])),
  );
}

/**
 * 6,000 cities (names in 997 ties) as a memory edge site, for cases that stream pages of many parts
 * (body-sink, handed-parts): its files, its spec (no count: the edge index's), and a query's bytes
 * as answerListing makes them.
 */
export function manyPartsSite(baseUrl: string, count = 6000) {
  const index = new CityIndex(
    CityTable.fromCities(Array.from({ length: count }, (_, i) => makeCity(i + 1, { name: `N${(i * 7919) % 997}` }))),
    'codepoint',
  );
  const { count: _count, ...spec } = testSpec({ baseUrl, count });
  const expected = (query: string) => Buffer.from(bodyBytes(answerListing(index, parseQuery(query), baseUrl).body));
  return { index, files: memoryEdgeSite(index), spec, expected };
}

/** memoryEdgeSite's files made once per index, tag and fine blocks, for cases that only read them: each call counts its own reads. */
const madeSites = new WeakMap<CityIndex, Map<string, Map<string, Uint8Array>>>();
export function sharedEdgeSite(index: CityIndex, tag = '00112233445566ff', fine?: number) {
  let sites = madeSites.get(index);
  if (!sites) madeSites.set(index, (sites = new Map()));
  const key = `${tag} ${fine}`;
  let files = sites.get(key);
  if (!files) sites.set(key, (files = memoryEdgeSite(index, tag, fine).files));
  return countedEdgeSite(files);
}

/** Edge files already made (shared by cases that only read them), with this reader's own count of paths and bytes read. */
export function countedEdgeSite(files: Map<string, Uint8Array>) {
  const reads: string[] = [];
  // Bytes read so far, whole files and ranges alike.
  const read = { bytes: 0 };
  const file = (path: string) => {
    reads.push(path);
    const bytes = files.get(path);
    if (!bytes) throw new Error(`no file ${path}`);
    return bytes;
  };
  return {
    files,
    reads,
    read: async (path: string) => {
      const bytes = file(path);
      read.bytes += bytes.length;
      return bytes;
    },
    /** As a platform's read over HTTP with a Content-Length (http/edge-site.ts httpRead): into the array `into` gives. */
    readInto: async (path: string, into?: Into) => {
      const bytes = file(path);
      read.bytes += bytes.length;
      if (!into) return bytes.slice();
      const target = into(bytes.length).subarray(0, bytes.length);
      target.set(bytes);
      return target;
    },
    readRange: async (path: string, start: number, end: number) => {
      const bytes = file(path).subarray(start, end);
      read.bytes += bytes.length;
      return bytes;
    },
    counted: read,
  };
}

type Worker = { url: Promise<URL>; ready: Promise<void>; dispose(): Promise<void> };

/** Header of the POST that asks the digest entry (below) for its pages' digests. */
const DIGESTS_HEADER = 'x-cities-api-test-page-digests';

/**
 * An entry beside the user's one (the generated worker.js or main.js, unchanged): the same
 * handler for every request, plus one POST listing request targets, each answered by that handler
 * in the runtime (with its real bindings and files) and sent back as its status and the SHA-256
 * of its bytes. Every page then crosses the runtime once per thousand instead of once per HTTP
 * request (through wrangler's proxy for workerd); the kit's requests still come over HTTP. The
 * handler answers eight targets at a time, as a runtime serves concurrent requests: workerd spent
 * 21 CPU-s on cities1234's 11,682 pages one at a time, 16 eight at a time.
 */
const digestEntry = (userEntry: string) => `import handler from './${userEntry}';
const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
export default {
  async fetch(request, ...context) {
    if (request.method !== 'POST' || !request.headers.has('${DIGESTS_HEADER}')) return handler.fetch(request, ...context);
    const targets = await request.json();
    const digests = [];
    let next = 0;
    const work = async () => {
      while (next < targets.length) {
        const i = next++;
        const answer = await handler.fetch(new Request(new URL(targets[i], request.url)), ...context);
        digests[i] = \`\${answer.status} \${hex(await crypto.subtle.digest('SHA-256', await answer.arrayBuffer()))}\`;
      }
    };
    await Promise.all(Array.from({ length: 8 }, work));
    return Response.json(digests);
  },
};
`;

/** The digest entry's file name. */
export const DIGEST_ENTRY = 'page-digests.test.js';

/** Writes the digest entry into a generated project beside `userEntry`: its path. */
export async function writeDigestEntry(projectDir: string, userEntry = 'worker.js'): Promise<string> {
  const entry = join(projectDir, DIGEST_ENTRY);
  await writeFile(entry, digestEntry(userEntry));
  return entry;
}

/**
 * Asks a runtime started with the digest entry for every page's target (a thousand per request)
 * and lists those not answered 200 with their file's bytes (by SHA-256).
 */
export async function pagesDifferingByDigest(
  url: string,
  site: string,
  pages: readonly { file: string; target: string }[],
): Promise<string[]> {
  const differing: string[] = [];
  for (let start = 0; start < pages.length; start += 1000) {
    const chunk = pages.slice(start, start + 1000);
    const response = await fetch(new URL(new URL(chunk[0]!.target, url).pathname, url), {
      method: 'POST',
      headers: { [DIGESTS_HEADER]: '1', 'content-type': 'application/json' },
      body: JSON.stringify(chunk.map((p) => p.target)),
    });
    const digests = response.ok ? ((await response.json()) as string[]) : [];
    for (const [i, { file, target }] of chunk.entries()) {
      // Read at once: fs/promises' readFile took 3.2 CPU-s for cities1234's 11,687 pages, readFileSync 0.6.
      const want = `200 ${createHash('sha256')
        .update(readFileSync(join(site, file)))
        .digest('hex')}`;
      if (digests[i] !== want)
        differing.push(`${target} (${file}): ${digests[i] ?? `digests answered ${response.status}`}`);
    }
  }
  return differing;
}

/** wrangler's dev server (workerd, through miniflare) started from a generated wrangler.jsonc (`entry` instead of its main), on a free port. */
export async function startWorker(config: string, entry?: string): Promise<{ url: string; stop: () => Promise<void> }> {
  process.env.WRANGLER_SEND_METRICS = 'false';
  // required, not imported: Node's import of this 12.7 MB CommonJS bundle first scans it for its
  // named exports (cjs-module-lexer), 1 CPU-s of a file's 2.4 (require: 1.4), each file that starts a Worker.
  const { unstable_startWorker } = createRequire(import.meta.url)('wrangler') as {
    unstable_startWorker(options: object): Promise<Worker>;
  };
  const worker = await unstable_startWorker({
    config,
    ...(entry ? { entrypoint: entry } : {}),
    dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, logLevel: 'error' },
  });
  await worker.ready;
  return { url: (await worker.url).origin, stop: () => worker.dispose() };
}

export const DENO = join(import.meta.dirname, '..', 'node_modules', '.bin', 'deno');

/** The project's deploy command (`deno serve --allow-read=SITE main.js`) run in `dir` on a free port: its URL once it listens. */
export async function denoServe(
  dir: string,
  deploy: string,
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const [, serve, ...args] = deploy.split(' ');
  const child = spawn(DENO, [serve!, '--host', '127.0.0.1', '--port', '0', ...args], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const starting = following(child, 'deno serve');
  return { url: await printed(starting, /Listening on (http:\/\/[^\s/]+)/), pid: child.pid!, stop: starting.stop };
}

export const WRANGLER_BIN = join(import.meta.dirname, '..', 'node_modules', '.bin', 'wrangler');

/** Offline, miniflare warns that it cannot fetch Cloudflare's `Request.cf` placeholder: a fact of this machine, not of the project. */
const OFFLINE_WARNING = /Unable to fetch the `Request\.cf` object/;

/**
 * `npx wrangler dev` run as a user runs it, in the project directory, on a free port: its URL
 * once it answers, the seconds that took, and its warnings (but the offline one).
 */
export async function wranglerDev(dir: string): Promise<{
  url: string;
  seconds: number;
  warnings: () => string[];
  output: () => string;
  pid: number;
  stop: () => Promise<void>;
}> {
  const started = performance.now();
  const child = spawn(WRANGLER_BIN, ['dev', '--ip', '127.0.0.1', '--port', '0', '--inspector-port', '0'], {
    cwd: dir,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', CI: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const starting = following(child, 'wrangler dev');
  const { output, stop } = starting;
  const url = await printed(starting, /Ready on (http:\/\/[^\s/]+)/);
  // Started once it answers: a request to an asset (no Worker code) until one does.
  const answers = () =>
    fetch(`${url}/openapi.json`).then(
      async (r) => (await r.arrayBuffer(), true),
      () => undefined,
    );
  await whenReady({ ...starting, name: `wrangler dev, ready at ${url} but not answering,` }, answers, 200);
  const warnings = () =>
    output()
      .split('\n')
      .filter((line) => /warn/i.test(line) && !OFFLINE_WARNING.test(line))
      .map((line) => line.trim());
  return { url, seconds: (performance.now() - started) / 1000, warnings, output, pid: child.pid!, stop };
}

/** A process and its descendants (Linux's /proc). */
async function processTree(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const ids = children.split(' ').filter(Boolean).map(Number);
  return [pid, ...(await Promise.all(ids.map(processTree))).flat()];
}

/** Files (sockets included) open in a process and its descendants (Linux's /proc; null elsewhere). */
export async function openFiles(pid: number): Promise<number | null> {
  if (!existsSync(`/proc/${pid}`)) return null;
  let files = 0;
  for (const p of await processTree(pid)) files += (await readdir(`/proc/${p}/fd`).catch(() => [])).length;
  return files;
}

/** Inotify watches held by a process and its descendants (Linux's /proc; null elsewhere). */
export async function inotifyWatches(pid: number): Promise<number | null> {
  const tree = processTree;
  try {
    let watches = 0;
    for (const p of await tree(pid))
      for (const fd of await readdir(`/proc/${p}/fdinfo`).catch(() => [])) {
        const info = await readFile(`/proc/${p}/fdinfo/${fd}`, 'utf8').catch(() => '');
        watches += info.split('\n').filter((line) => line.startsWith('inotify')).length;
      }
    return watches;
  } catch {
    return null;
  }
}

/** A body read by a client taking one byte a tick (each byte read as the last was, a setImmediate apart). */
export function readByteByByte(url: string): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    http
      .get(url, (response) => {
        const got: number[] = [];
        response.pause();
        const take = () => {
          const byte = response.read(1) as Buffer | null;
          if (byte) got.push(byte[0]!);
          if (response.readableEnded) resolve(Buffer.from(got));
          else setImmediate(take);
        };
        response.on('end', () => resolve(Buffer.from(got)));
        response.on('error', reject);
        take();
      })
      .on('error', reject);
  });
}
