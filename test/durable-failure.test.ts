import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manyCities, writeDataset } from './crash-helpers.js';
import { PROGRESS_LINES } from './cli-helpers.js';
import { readTree, tempDir } from './helpers.js';
import { ROOT } from './serve-helpers.js';
import { requireTool } from './tool-check.js';
import { STRACE, tracedSpawn } from './traced-process.js';

// What a --durable build does when a sync FAILS (a disk's I/O error, a full disk), the failure
// injected by strace (`-e inject=SYSCALL:error=ERRNO:when=1`) into the sync of one path only
// (`-P`): before the swap, nothing is published (the old site byte for byte, no draft left); after
// it (the site's parent directory), the new site is in place but may not survive a power loss, and
// the build says so and fails. Either way one line says which file, the errno in words and what to
// do; the next build (no injection) works and its site is whole. Only the first sync of the path
// fails (`when=1`): a build that synced again and trusted the retry would pass where it must not
// (fsyncgate: a failed sync may have dropped the dirty pages, and a later one then succeeds).

const CLI = join(ROOT, 'bin/cities-api.js');
const available = requireTool('strace', STRACE, 'apt-get install -y strace');
const ARGS = ['--orderings', 'default,name_en', '--page-sizes', '10'];

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-durable-failure-')));
afterAll(() => cleanup?.());

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `cities-api build` with the first `syscall` on `path(pid)` failing with `errno` (strace attached
 * before it runs: traced-process.ts). No injection when `inject` is absent; then, given `trace`, its
 * unlinks and fsyncs written there.
 */
async function build(
  args: string[],
  inject?: { syscall: string; errno: string; path: (pid: number) => string },
  trace?: string,
) {
  const straceArgs = inject
    ? (pid: number) =>
        ['-P', inject.path(pid), '-o', '/dev/null', '-e', `trace=${inject.syscall}`].concat([
          '-e',
          `inject=${inject.syscall}:error=${inject.errno}:when=1`,
        ])
    : trace
      ? () => ['-y', '-o', trace, '-e', 'trace=unlink,unlinkat,fsync']
      : undefined;
  const { child, tracer } = await tracedSpawn(process.execPath, [CLI, 'build', ...args], straceArgs, { cwd: root });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => void (stdout += d));
  child.stderr?.on('data', (d: Buffer) => void (stderr += d));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  await tracer;
  return { code, stdout, stderr } satisfies Ran;
}

const data = () => join(root, 'cities.json');
const site = () => join(root, 'site');
/** The dataset of round `n`: each round's differs from the last (a name), so a published site is told from the old. */
const round = (n: number) => manyCities(60, 'Durable').map((c, i) => (i ? c : { ...c, name_en: `Round ${n}` }));
/** What the build left beside the site besides the site, its stat cache and its durable mark (a draft, the old tree...). */
const leftovers = () => readdirSync(root).filter((name) => /^\.site\.(?!(?:stat-cache|durable)$)/.test(name));

/** A reference build of the same dataset, elsewhere: what a whole site holds. */
async function reference(n: number): Promise<Map<string, Buffer>> {
  const dir = join(root, `reference-${n}`);
  const other = join(root, `reference-${n}.json`);
  await writeDataset(other, round(n));
  const ran = await build(['--data', other, '--site', dir, ...ARGS]);
  expect(ran.code).toBe(0);
  return readTree(dir);
}

describe.skipIf(!available)('a --durable build whose sync fails (strace fault injection)', () => {
  let n = 0;
  beforeAll(async () => {
    await writeDataset(data(), round(0));
    expect((await build(['--data', data(), '--site', site(), '--durable', ...ARGS])).code).toBe(0);
  });

  const staging = (pid: number, path = '') => join(root, `.site.staging-${pid}`, path);
  it.each<[string, string, string, (pid: number) => string, RegExp, 'not published' | 'published']>([
    [
      "a page a writer thread wrote: its fdatasync's I/O error",
      'fdatasync',
      'EIO',
      (pid) => staging(pid, 'cities/name_en/10/3.json'),
      /cities\/name_en\/10\/3\.json.*input\/output error.*check them/,
      'not published',
    ],
    [
      "a file the main thread wrote (the edge data's rows): its fdatasync's I/O error",
      'fdatasync',
      'EIO',
      (pid) => staging(pid, '_cities-api/edge/rows/name_en-0.bin'),
      /_cities-api\/edge\/rows\/name_en-0\.bin.*input\/output error.*check them/,
      'not published',
    ],
    [
      "the manifest: its fdatasync's full disk",
      'fdatasync',
      'ENOSPC',
      (pid) => staging(pid, '_cities-api/manifest.json'),
      /_cities-api\/manifest\.json.*no space left.*free some space/,
      'not published',
    ],
    [
      "a directory of the new tree: its fsync's I/O error",
      'fsync',
      'EIO',
      (pid) => staging(pid, 'cities/name_en'),
      /cities\/name_en.*input\/output error.*check them/,
      'not published',
    ],
    [
      "the new tree's own directory: its fsync's full disk",
      'fsync',
      'ENOSPC',
      (pid) => staging(pid),
      /no space left.*free some space/,
      'not published',
    ],
    [
      "the site's parent after the swap: its fsync's I/O error (published, maybe not durable)",
      'fsync',
      'EIO',
      () => root,
      /published, but it may not be durable.*input\/output error.*check them.*build again with --durable/,
      'published',
    ],
  ])('%s', async (_, syscall, errno, path, message, outcome) => {
    const before = await readTree(site());
    await writeDataset(data(), round(++n));
    const ran = await build(['--data', data(), '--site', site(), '--durable', '--force', ...ARGS], {
      syscall,
      errno,
      path,
    });
    const said = (stderr: string) =>
      stderr
        .replace(PROGRESS_LINES, '')
        .split('\n')
        .filter((line) => line && !line.includes('warning: no --base-url'));
    const lines = said(ran.stderr);
    const stack = / {4}at /.test(ran.stderr);
    expect({ code: ran.code, lines: lines.length, said: message.test(lines[0] ?? ''), stack }, ran.stderr).toEqual({
      code: 1,
      lines: 1,
      said: true,
      stack: false,
    });
    expect(lines[0]).toContain(errno);
    // A site published unsynced is marked so beside it, until a durable build has written it whole.
    expect(leftovers()).toEqual(outcome === 'published' ? ['.site.unsynced'] : []);
    if (outcome === 'not published') expect(await readTree(site())).toEqual(before);
    else expect(await readTree(site())).toEqual(await reference(n));
    // The next build, nothing injected, works and leaves a whole site.
    const trace = join(root, 'trace');
    const next = await build(['--data', data(), '--site', site(), '--durable', ...ARGS], undefined, trace);
    expect({ code: next.code, said: said(next.stderr) }).toEqual({ code: 0, said: [] });
    // After a failed sync of the published site, a sync that now succeeds proves nothing (the
    // failed one may have dropped what it was to write): the next durable build writes it all again.
    const written = Number(/: (\d+) written/.exec(next.stdout)?.[1]);
    const files = Number(/: (\d+) files/.exec(next.stdout)?.[1]);
    if (outcome === 'published') expect(written).toBe(files);
    // The mark's removal is on disk: the site's parent is synced after it (a power loss would bring it back).
    const calls = readFileSync(trace, 'utf8').split('\n');
    const unmarked = calls.findIndex((call) => /^\d+ +unlink(at)?\(.*\/\.site\.unsynced"/.test(call));
    const synced = calls.findLastIndex((call) => call.includes(`fsync(`) && call.includes(`<${root}>`));
    if (outcome === 'published')
      expect({ unmarked: unmarked >= 0, syncedAfter: synced > unmarked }).toEqual({
        unmarked: true,
        syncedAfter: true,
      });
    expect(await readTree(site())).toEqual(await reference(n));
    expect(leftovers()).toEqual([]);
  });
});
