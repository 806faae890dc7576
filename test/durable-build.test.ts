import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manyCities, writeDataset } from './crash-helpers.js';
import { tempDir } from './helpers.js';
import { ROOT } from './serve-helpers.js';
import { requireTool } from './tool-check.js';

// What a --durable build makes durable before its swap, read from the system calls it makes
// (strace): a power loss or a kernel crash, unlike a kill, can bring back a renamed tree whose
// files were never written to the disk. Every file the build wrote must be fdatasynced, and every
// directory of the new tree fsynced, before the rename that publishes the tree; the site's parent
// directory after it. Files the build did not write (linked from the previous tree) are not
// synced again when a durable build published that tree; after a build without --durable (whose
// files are the kernel's to write back) they are. Without --durable nothing is synced (the default's cost is unchanged).

const STRACE = '/usr/bin/strace';
const run = promisify(execFile);
const CALLS = ['fdatasync', 'fsync', 'rename', 'renameat', 'renameat2'];

interface Trace {
  /** Paths fdatasynced, and fsynced, each with the index of the call's completion. */
  readonly datasynced: Map<string, number>;
  readonly synced: Map<string, number>;
  /** Each rename's completion: [from, to, index]. */
  readonly renames: [string, string, number][];
}

/** The completed calls of an `strace -f -y` log (a call split by another thread's is joined again). */
function readTrace(file: string): Trace {
  const trace: Trace = { datasynced: new Map(), synced: new Map(), renames: [] };
  const pending = new Map<string, string>();
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((raw, at) => {
      const [, pid, rest] = /^(\d+) +(.*)$/.exec(raw) ?? [];
      if (!pid || !rest) return;
      let line = rest;
      if (line.endsWith('<unfinished ...>'))
        return void pending.set(pid, line.slice(0, -'<unfinished ...>'.length).trimEnd());
      const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(line);
      if (resumed) line = (pending.get(pid) ?? '') + resumed[1];
      if (!/\) += 0$/.test(line)) return;
      const sync = /^(fdatasync|fsync)\(\d+<(.*)>\)/.exec(line);
      if (sync) (sync[1] === 'fdatasync' ? trace.datasynced : trace.synced).set(sync[2]!, at);
      const paths = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
      if (/^rename/.test(line) && paths.length === 2) trace.renames.push([paths[0]!, paths[1]!, at]);
    });
  return trace;
}

/** Every file and directory of a tree (relative; '' the root), with its inode. */
function treeOf(dir: string): { files: Map<string, number>; dirs: string[] } {
  const files = new Map<string, number>();
  const dirs = [''];
  if (!existsSync(dir)) return { files, dirs: [] };
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = relative(dir, join(entry.parentPath, entry.name));
    if (entry.isDirectory()) dirs.push(path);
    else if (entry.isFile()) files.set(path, statSync(join(dir, path)).ino);
  }
  return { files, dirs };
}

let root: string;
let cleanup: () => Promise<void>;
const available = requireTool('strace', STRACE, 'apt-get install -y strace');

beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-durable-')));
afterAll(() => cleanup?.());

/** Builds `site` from `data` under strace; the trace, the tree before and after, and what the build said. */
async function tracedBuild(site: string, data: string, ...args: string[]) {
  const before = treeOf(site);
  const log = join(root, 'trace');
  await rm(log, { force: true });
  const { stdout } = await run(
    STRACE,
    ['-f', '-y', '-qq', '--seccomp-bpf', '-e', `trace=${CALLS.join(',')}`, '-o', log, process.execPath]
      .concat([join(ROOT, 'bin/cities-api.js'), 'build', '--data', data, '--site', site])
      .concat(['--orderings', 'default,name_en', '--page-sizes', '10', ...args]),
    { cwd: root },
  );
  return { trace: readTrace(log), before, after: treeOf(site), said: stdout };
}

describe.skipIf(!available)('a --durable build is on disk before its swap publishes it (strace)', () => {
  const data = () => join(root, 'cities.json');
  const site = () => join(root, 'site');
  beforeAll(() => writeDataset(data(), manyCities(60, 'Durable')));

  it.each<[string, () => Promise<unknown>, string[], 'all' | 'rewritten' | 'relinked' | 'none' | 'not asked']>([
    ['a first build: every file synced', async () => undefined, [], 'all'],
    [
      'a rebuild after one city changed: the files it rewrote, and none it linked',
      () =>
        writeDataset(
          data(),
          manyCities(60, 'Durable').map((c, i) => (i ? c : { ...c, name_ar: 'آخر' })),
        ),
      [],
      'rewritten',
    ],
    ['a rebuild with no change: nothing synced, nothing swapped', async () => undefined, [], 'none'],
    ['a rebuild with --force: every file synced again', async () => undefined, ['--force'], 'all'],
    // The default: atomic against a kill only, at no cost.
    ['a rebuild with --force, not --durable: nothing synced', async () => undefined, ['--force'], 'not asked'],
    [
      "a durable rebuild with no change after one without --durable: every file synced, those it linked and a user's file too",
      async () => {
        await mkdir(join(site(), 'notes'));
        await writeFile(join(site(), 'notes', 'mine.txt'), 'a file of the user, never synced');
      },
      [],
      'relinked',
    ],
    ['a durable rebuild with no change after that durable one: nothing synced', async () => undefined, [], 'none'],
  ])('%s', async (_, change, args, expected) => {
    await change();
    const durable = expected === 'not asked' ? [] : ['--durable'];
    const { trace, before, after, said } = await tracedBuild(site(), data(), ...durable, ...args);
    // Written: a file of the new tree that is not the previous tree's (another inode).
    const written = [...after.files].filter(([path, ino]) => before.files.get(path) !== ino).map(([path]) => path);
    const share = written.length / after.files.size;
    const shares = { none: share === 0, relinked: share === 0, rewritten: share > 0 && share < 0.5 };
    expect(shares[expected as keyof typeof shares] ?? share === 1).toBe(true);
    if (expected === 'not asked') {
      const swapped = trace.renames.some(([, to]) => to === site());
      expect({ swapped, datasynced: trace.datasynced.size }).toEqual({ swapped: true, datasynced: 0 });
      return;
    }
    if (expected === 'none') {
      expect({ renames: trace.renames.length, datasynced: trace.datasynced.size }).toEqual({
        renames: 0,
        datasynced: 0,
      });
      return;
    }
    const [staging, , at] = trace.renames.find(([, to]) => to === site()) ?? ['', '', -1];
    const late = (synced: Map<string, number>, path: string) => !((synced.get(join(staging, path)) ?? at) < at);
    // What must be on disk before the swap: what the build wrote, and after a build without
    // --durable what it linked too (the manifest included).
    const mustSync = expected === 'relinked' ? [...after.files.keys()] : written;
    expect({
      swapped: at >= 0,
      written: written.length,
      writtenSaid: Number(/: (\d+) written/.exec(said)?.[1]),
      unsynced: mustSync.filter((path) => late(trace.datasynced, path)),
      // Only what this build wrote: what it linked was synced by the durable build that wrote it.
      syncedNotWritten: [...trace.datasynced.keys()].filter(
        (p) => p.startsWith(staging) && !mustSync.includes(relative(staging, p)),
      ),
      dirsUnsynced: after.dirs.filter((dir) => late(trace.synced, dir)),
      parentSyncedAfter: (trace.synced.get(dirname(site())) ?? -1) > at,
    }).toEqual({
      swapped: true,
      written: written.length,
      writtenSaid: written.length,
      unsynced: [],
      syncedNotWritten: [],
      dirsUnsynced: [],
      parentSyncedAfter: true,
    });
  });
});
