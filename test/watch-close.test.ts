import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHere } from '../src/app/build.js';
import { serve, type ServeOptions } from '../src/app/serve.js';
import { runningThreads } from '../src/proc/workers.js';
import { MANIFEST_PATH } from '../src/site/manifest.js';
import { BEHIND_PATH } from '../src/site/behind.js';
import { siteSiblings } from '../src/fs/lock.js';
import { makeCity, tempDir } from './helpers.js';
import { createAt, rawRequest, startCli } from './serve-helpers.js';

// A background build still running when the server stops (#26 leftovers): a --watch rebuild (also
// with --workers 2 and with --writable) and a writable server's catch-up build after a POST.
// close() (the library's), SIGTERM and Ctrl-C (the CLI's) stop it as Ctrl-C stops a build: its
// staging tree removed, the lock released, the site left as it was; close() resolves once none of
// its threads runs, and no worker process is left. A stopped catch-up loses no acknowledged city:
// the site stays marked behind, and the next start builds it.

/** Cities enough for the rebuild to run in a thread (1 MB and more, build.ts) and for long enough to be caught. */
const CITIES = 4000;
const TOKEN = 'test-token-0123456789';
const SITE = ['--port', '0', '--base-url', 'http://x.test', '--collation', 'codepoint', '--page-sizes', '10'];

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
}, 60_000);
afterAll(() => cleanup());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dataset = (count: number, name = 'City') =>
  JSON.stringify(Array.from({ length: count }, (_, i) => makeCity(i + 1, { name: `${name} ${i + 1}` })));

/** A site built from a dataset of its own, in a directory of its own (`label`), served as its dataset is edited. */
async function builtSite(label: string): Promise<{ site: string; data: string; manifest: Buffer }> {
  const site = join(dir, label, 'site');
  const data = join(dir, label, 'cities.json');
  await mkdir(join(dir, label));
  await writeFile(data, dataset(CITIES));
  await buildHere({ data, out: site, baseUrl: 'http://x.test', pageSizes: [10], collation: 'codepoint' });
  return { site, data, manifest: await readFile(join(site, MANIFEST_PATH)) };
}

/** Waits (at most 30 s) until the rebuild writes its staging tree beside the site (the CLI's is named by its own pid). */
async function rebuilding(site: string): Promise<void> {
  const staging = `${basename(siteSiblings(site).staging).replace(/\d+$/, '')}`;
  for (let waited = 0; waited < 30_000; waited += 10) {
    if ((await readdir(join(site, '..'))).some((name) => name.startsWith(staging))) return;
    await sleep(10);
  }
  throw new Error(`no rebuild seen (${staging}*)`);
}

/** The processes `pid` started that are still running (Linux's /proc). */
async function childrenOf(pid: number): Promise<number[]> {
  const listed = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return listed.split(' ').filter(Boolean).map(Number);
}

/** Waits (at most 10 s) until none of `pids` runs: a worker process exits as its primary closes. */
async function gone(pids: readonly number[]): Promise<number[]> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    const running = pids.filter((pid) => existsSync(`/proc/${pid}`));
    if (!running.length) return running;
    await sleep(50);
  }
  return pids.filter((pid) => existsSync(`/proc/${pid}`));
}

/**
 * What is beside the site (its lock, a staging tree, an old tree, its stat cache...) and the dataset; not what a writable
 * server's fold of its log leaves beside the dataset as it stops (`cities.json.bak`, `.cities.json.folds`: README).
 */
const beside = async (site: string) =>
  (await readdir(join(site, '..'))).filter((name) => !/^cities\.json\.bak$|^\.cities\.json\.folds$/.test(name)).sort();

/** How a case starts its background build: an edit of the dataset (--watch), or a POST (--writable's catch-up). */
type Kind = {
  readonly label: string;
  readonly library: Partial<ServeOptions>;
  readonly cli: string[];
  readonly start: (url: string, data: string) => Promise<void>;
  /** What the CLI says as it stops that build. */
  readonly said: RegExp;
  /** Whether a POSTed city is left unbuilt (the site marked behind, built by the next start). */
  readonly posted: boolean;
  /** The worker processes it runs (the rows check each is gone after the stop). */
  readonly processes: number;
};

const edit = async (_url: string, data: string) => writeFile(data, dataset(CITIES, 'Town'));
const post = async (url: string) => {
  const answer = await createAt(url, TOKEN, 'Posted');
  if (answer.status !== 201) throw new Error(`POST answered ${answer.status}: ${answer.body.toString()}`);
};
const KINDS: Kind[] = [
  {
    label: '--watch',
    library: { watch: true },
    cli: ['--watch'],
    start: edit,
    said: /stopped the rebuild/,
    posted: false,
    processes: 0,
  },
  {
    label: '--watch --workers 2',
    library: { watch: true, workers: 2 },
    cli: ['--watch', '--workers', '2'],
    start: edit,
    said: /stopped the rebuild/,
    posted: false,
    processes: 2,
  },
  {
    label: '--watch --writable',
    library: { watch: true, writable: true, token: TOKEN },
    cli: ['--watch', '--writable'],
    start: edit,
    said: /stopped the rebuild/,
    posted: false,
    processes: 0,
  },
  {
    label: "--writable's catch-up after a POST",
    library: { writable: true, token: TOKEN },
    cli: ['--writable'],
    start: post,
    said: /stopped the catch-up build/,
    posted: true,
    processes: 0,
  },
];

type Stop = (site: string, data: string, kind: Kind) => Promise<void>;
const STOPS: [string, Stop][] = [
  [
    "serve()'s close() (the library's): it resolves once none of the build's threads and no worker process runs",
    async (site, data, kind) => {
      const before = runningThreads();
      const children = await childrenOf(process.pid);
      const server = await serve({ dir: site, data, port: 0, baseUrl: 'http://x.test', ...kind.library });
      const workers = (await childrenOf(process.pid)).filter((pid) => !children.includes(pid));
      expect(workers).toHaveLength(kind.processes);
      await kind.start(server.url, data);
      await rebuilding(site);
      await server.close();
      expect(runningThreads()).toBeLessThanOrEqual(before);
      expect(await gone(workers)).toEqual([]);
    },
  ],
  ...(['SIGTERM', 'SIGINT'] as const).map((signal): [string, Stop] => [
    `the CLI sent ${signal}: it says it stopped the build, exits 0 as a stop does, and leaves no worker process`,
    async (site, data, kind) => {
      const server = await startCli(['--site', site, '--data', data, ...SITE, ...kind.cli], {
        CITIES_API_TOKEN: TOKEN,
      });
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      try {
        const workers = await childrenOf(server.child.pid!);
        expect(workers).toHaveLength(kind.processes);
        await kind.start(server.url, data);
        await rebuilding(site);
        server.child.kill(signal);
        expect(await exited).toBe(0);
        expect(server.output()).toMatch(new RegExp(`${kind.said.source}[^\\n]*\\n(.*\\n)*stopped\\n$`));
        expect(await gone(workers)).toEqual([]);
      } finally {
        server.child.kill('SIGKILL'); // (a failed case leaves no server running; gone already, a no-op)
      }
    },
  ]),
];

describe('a background build running as the server stops is stopped: the site as it was, nothing left of it', () => {
  it.each(
    KINDS.flatMap((kind) => STOPS.map(([how, stop]): [string, string, Kind, Stop] => [kind.label, how, kind, stop])),
  )(
    '%s, %s',
    async (label, how, kind, stop) => {
      const { site, data, manifest } = await builtSite(`${label}-${how}`.replace(/\W+/g, '-').slice(0, 60));
      const built = await beside(site);
      await stop(site, data, kind);
      expect(await beside(site)).toEqual(built);
      // Nothing of it goes on later either: the site stays the one built before.
      await sleep(500);
      expect(await beside(site)).toEqual(built);
      expect(await readFile(join(site, MANIFEST_PATH))).toEqual(manifest);
      if (!kind.posted) return;
      // The POSTed city is in the dataset file (the log folded in at the stop), the site still marked behind it...
      expect((JSON.parse(await readFile(data, 'utf8')) as { name_en: string }[]).at(-1)?.name_en).toBe('Posted');
      expect(existsSync(join(site, BEHIND_PATH))).toBe(true);
      // ...and the next start builds it: the marker gone, the city answered from the files.
      const again = await serve({ dir: site, data, port: 0, baseUrl: 'http://x.test' });
      try {
        expect(existsSync(join(site, BEHIND_PATH))).toBe(false);
        const last = await rawRequest(`${again.apiUrl}?page=${CITIES + 1}&page_size=1`);
        expect(JSON.parse(last.body.toString()).results.map((c: { name_en: string }) => c.name_en)).toEqual(['Posted']);
      } finally {
        await again.close();
      }
    },
    120_000,
  );
});
