import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { watch } from 'node:fs';
import { lstat, readdir, realpath, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { CITY_FIELDS, type City } from '../src/core/fields.js';
import { MANIFEST_PATH } from '../src/site/manifest.js';
import { readManifest } from '../src/store/manifest-file.js';
import { makeCity, readTree } from './helpers.js';
import { ROOT } from './serve-helpers.js';
import { testTimeLeft } from './started-process.js';

/** mulberry32: a tiny seeded generator, so "random" kill moments are the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** `runs` moments in [from, to) ms, one drawn at random in each of `runs` equal strata, so they cover the whole span. */
export function spreadDelays(runs: number, from: number, to: number, random: () => number): number[] {
  return Array.from({ length: runs }, (_, i) => from + ((i + random()) / runs) * (to - from));
}

/** The items in a random order (Fisher-Yates), so any first few of them are spread too. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/** `n` valid cities with distinct names (`${tag} 00042`), ids 1..n, every 50th a top city. */
export function manyCities(n: number, tag: string): City[] {
  return Array.from({ length: n }, (_, i) =>
    makeCity(i + 1, { name: `${tag} ${String((i * 7919) % n).padStart(5, '0')}`, top: (i + 1) % 50 === 0 }),
  );
}

/** Writes cities as a `.csv` (names must not need quoting) or `.json` dataset, by the file's extension. */
export async function writeDataset(file: string, cities: readonly City[]): Promise<void> {
  if (file.endsWith('.json'))
    return writeFile(file, `[\n${cities.map((c) => `  ${JSON.stringify(c)}`).join(',\n')}\n]\n`);
  const rows = cities.map((c) => CITY_FIELDS.map((f) => String(c[f] ?? '')).join(','));
  await writeFile(file, `${[CITY_FIELDS.join(','), ...rows].join('\n')}\n`);
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Starts `bin/cities-api.js ARGS` as a real process (see spawnNode). */
export function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): ReturnType<typeof spawnNode> {
  return spawnNode([join(ROOT, 'bin/cities-api.js'), ...args], env);
}

/**
 * Starts `node ARGS`. `exited` resolves once it is gone (reaped); `printed(re)` once its stdout
 * matches `re` (or it has exited).
 */
export function spawnNode(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcess; exited: Promise<Exit>; printed: (re: RegExp) => Promise<void> } {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('close', () => running.delete(child));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<Exit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  const printed = (re: RegExp) =>
    new Promise<void>((resolve) => {
      const check = () => re.test(stdout) && (child.stdout!.off('data', check), resolve());
      child.stdout!.on('data', check);
      check();
      void exited.then(() => resolve());
    });
  return { child, exited, printed };
}

const running = new Set<ChildProcess>();
/** Kills (SIGKILL) the processes spawnCli started that are still running, e.g. after a failed or timed-out test. */
export async function killStragglers(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise((resolve) => {
          child.once('close', resolve);
          child.kill('SIGKILL');
        }),
    ),
  );
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once an entry named `name` appears in `dir` (seen through fs.watch), or once `until` settles. */
export function appears(dir: string, name: string, until: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(dir, (_, file) => file === name && done());
    const done = () => {
      watcher.close();
      resolve();
    };
    void until.finally(done);
  });
}

/**
 * The entries a build leaves beside a site directory (`.NAME.lock`, `.NAME.staging-PID`,
 * `.NAME.previous-PID`, `.NAME.stat-cache-PID.TOKEN`), but its stat cache (`.NAME.stat-cache`), kept for good,
 * and a durable build's mark (`.NAME.durable`), kept while the site is its.
 */
export async function siteLeftovers(outDir: string): Promise<string[]> {
  const prefix = `.${basename(outDir)}.`;
  return (await readdir(dirname(outDir)))
    .filter((name) => name.startsWith(prefix) && name !== `${prefix}stat-cache` && name !== `${prefix}durable`)
    .sort();
}

/**
 * Checks a built site against its own manifest: every listed file present with its sha256, no
 * file the manifest does not account for, and each `.gz`/`.br` decompressing to its page.
 * Returns the dataset hash it was built from and the problems found (none for a whole site).
 */
export async function checkSite(
  dir: string,
): Promise<{ dataset: string | null; problems: string[]; tree: Map<string, Buffer> }> {
  const manifest = await readManifest(dir).catch((error: Error) => error);
  if (!manifest || manifest instanceof Error)
    return { dataset: null, problems: [`no readable manifest: ${String(manifest)}`], tree: new Map() };
  const tree = await readTree(dir);
  const problems: string[] = [];
  for (const [path, hash] of Object.entries(manifest.files)) {
    const bytes = tree.get(path);
    if (!bytes) problems.push(`missing ${path}`);
    else if (createHash('sha256').update(bytes).digest('hex') !== hash) problems.push(`wrong bytes in ${path}`);
  }
  const unpack = { '.gz': gunzipSync, '.br': brotliDecompressSync } as const;
  for (const [path, bytes] of tree) {
    if (path === MANIFEST_PATH || path in manifest.files) continue;
    const variant = (['.gz', '.br'] as const).find((v) => path.endsWith(v));
    const page = variant && path.slice(0, -variant.length);
    if (!variant || !page || !(page in manifest.files)) problems.push(`extra file ${path}`);
    else if (!unpack[variant](bytes).equals(tree.get(page) ?? Buffer.alloc(0)))
      problems.push(`${path} does not decompress to ${page}`);
  }
  if (manifest.settings.compression !== 'none') {
    for (const path of Object.keys(manifest.files)) {
      if (/^cities\/.*\/(\d+|last|all)\.json$/.test(path) && !(tree.has(`${path}.gz`) && tree.has(`${path}.br`)))
        problems.push(`no .gz/.br beside ${path}`);
    }
  }
  return { dataset: manifest.dataset.sha256, problems, tree };
}

/** Paths whose bytes differ between two trees, or that only one holds. */
export function treeDifferences(a: ReadonlyMap<string, Buffer>, b: ReadonlyMap<string, Buffer>): string[] {
  const paths = new Set([...a.keys(), ...b.keys()]);
  return [...paths].filter((p) => !a.get(p)?.equals(b.get(p) ?? Buffer.alloc(0)) || !b.has(p)).sort();
}

/**
 * Resolves once a writable server has folded every logged city into the dataset `file` (its
 * write-ahead log, `.NAME.wal` beside the real file, is gone); fails after `ms` (by default, just
 * before the test's own timeout: test/started-process.ts).
 */
export async function caughtUp(file: string, ms = testTimeLeft()): Promise<void> {
  const real = await realpath(file);
  const log = join(dirname(real), `.${basename(real)}.wal`);
  // The log is dropped under the dataset's lock: caught up once the lock is released too.
  const lock = join(dirname(real), `.${basename(real)}.lock`);
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(20))
    if (!(await lstat(log).catch(() => null)) && !(await lstat(lock).catch(() => null))) return;
  throw new Error(`${log} still there after ${ms} ms: the logged cities were not folded into ${file}`);
}
