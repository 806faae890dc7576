import { lstatSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { VARIANTS } from './compression.js';
import type { StatCache } from './stat-cache.js';
import type { Slot } from './stat-cache-format.js';

// The inner loop of a site's check, run by this thread and a helper thread on shares of the
// manifest's files: one lstat per file and per `.gz`/`.br` the build wrote, nothing allocated
// but the Stats node makes. A symbolic link or a directory is never followed.

/** Directories of a site checked, once each, to be real directories all the way down from its root. */
export class RealDirs {
  private readonly known = new Map<string, boolean>();

  constructor(private readonly root: string) {}

  /** Whether `dir` (relative to the root; '.' is the root) is a directory reached through no symbolic link. */
  ok(dir: string): boolean {
    if (dir === '.' || dir === '') return true;
    let known = this.known.get(dir);
    if (known === undefined) {
      known = this.ok(dirname(dir)) && !!lstatOrNull(join(this.root, dir))?.isDirectory();
      this.known.set(dir, known);
    }
    return known;
  }
}

/** A site's paths in its manifest's order: a FileList read from it, or the list another thread sent. */
export interface SitePaths {
  readonly size: number;
  path(i: number): string;
}

/** Paths sent as an array, as SitePaths. */
export function pathsOf(list: readonly string[]): SitePaths {
  return { size: list.length, path: (i) => list[i]! };
}

/** The name of the `slot`th file of a path: the file itself, its `.gz`, its `.br`. */
const SUFFIXES = ['', ...VARIANTS] as const;
const SLOTS: readonly Slot[] = [0, 1, 2];

/**
 * Appends to `changed` the files of `paths[from..to)` (manifest paths, the cache's order) and of
 * their recorded `.gz`/`.br` that are not regular files showing the inode, size and mtime recorded.
 */
export function checkRange(
  siteDir: string,
  paths: SitePaths,
  cache: StatCache,
  dirs: RealDirs,
  from: number,
  to: number,
  changed: string[],
): void {
  const root = join(siteDir, '/');
  let dir: string | undefined;
  let realDir = true;
  for (let i = from; i < to; i++) {
    const path = paths.path(i);
    const slash = path.lastIndexOf('/');
    const here = slash < 0 ? '' : path.slice(0, slash);
    if (here !== dir) realDir = dirs.ok((dir = here));
    for (const slot of SLOTS) {
      if (!cache.hasSlot(i, slot)) continue;
      const name = path + SUFFIXES[slot];
      const stats = realDir ? lstatOrNull(root + name) : null;
      if (!stats?.isFile() || !cache.matchesAt(i, slot, stats)) changed.push(name);
    }
  }
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/** Paths a thread takes at a time from the counter the checking threads share (about 2 ms of lstats). */
const CHUNK = 256;

/** The changed names found, by the index of the chunk's first path (merged in that order: the manifest's). */
export type Found = [from: number, names: string[]][];

/**
 * Checks chunks of `paths` taken from `next` (an index shared with the other checking thread,
 * advanced atomically) until none is left; `pause` between chunks (a thread that must keep
 * answering yields to its event loop).
 */
export async function checkShares(
  siteDir: string,
  paths: SitePaths,
  cache: StatCache,
  next: Int32Array,
  pause?: () => Promise<void>,
): Promise<Found> {
  const dirs = new RealDirs(siteDir);
  const found: Found = [];
  for (let from = Atomics.add(next, 0, CHUNK); from < paths.size; from = Atomics.add(next, 0, CHUNK)) {
    const changed: string[] = [];
    checkRange(siteDir, paths, cache, dirs, from, Math.min(from + CHUNK, paths.size), changed);
    if (changed.length) found.push([from, changed]);
    await pause?.();
  }
  return found;
}
