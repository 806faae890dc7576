import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileStat } from '../fs/file-output.js';
import { MANIFEST_PATH } from '../site/manifest.js';
import type { FileList } from '../fs/file-list.js';
import { siteSiblings } from '../fs/lock.js';
import {
  DIGEST_BYTES,
  FIELDS,
  FORMAT,
  HEADER,
  MAGIC,
  sameStat,
  SLOTS,
  TAIL,
  validHeader,
  type DatasetRecord,
  type Slot,
} from './stat-cache-format.js';

// The site's stat cache read back (its format: stat-cache-format.ts; written by stat-records.ts).

/** The records of a site's files, aligned with its manifest's paths (sorted); `find` gives a path's index. */
export class StatCache {
  private constructor(
    private readonly find: (path: string) => number,
    /** The header, then SLOTS numbers per path. */
    readonly data: Float64Array,
  ) {}

  /** A cache read by another thread: its `data`, for these paths (the manifest's, in its order). */
  static of(paths: readonly string[], data: Float64Array): StatCache {
    let index: Map<string, number> | undefined;
    return new StatCache((path) => (index ??= new Map(paths.map((p, i) => [p, i]))).get(path) ?? -1, data);
  }

  /** The site's cache, or null when it has none that belongs to its current manifest (its files as read, in its order). */
  static async read(siteDir: string, manifest: { readonly files: FileList }): Promise<StatCache | null> {
    // Read straight into its numbers: a copy would free a block of its size at once (10 MB for a
    // 140,000-city site), raising glibc's mmap threshold and so the free memory each arena keeps.
    let data: Float64Array;
    try {
      const file = await open(siteSiblings(siteDir).statCache, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const { size } = await file.stat();
        if (size % 8 || size < HEADER * 8) return null;
        data = new Float64Array(size / 8);
        const bytes = new Uint8Array(data.buffer);
        for (let done = 0; done < size; ) {
          const { bytesRead } = await file.read(bytes, done, size - done, done);
          if (!bytesRead) return null;
          done += bytesRead;
        }
      } finally {
        await file.close();
      }
    } catch {
      return null;
    }
    const { files } = manifest;
    if (!validHeader(data, data.length) || data[2] !== files.size || !(await boundToManifest(siteDir, data)))
      return null;
    return new StatCache((path) => files.find(path), data);
  }

  /** The dataset record of the site's cache (format 4) that belongs to its current manifest, or null. */
  static async readDataset(siteDir: string): Promise<DatasetRecord | null> {
    try {
      const file = await open(siteSiblings(siteDir).statCache, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const { size } = await file.stat();
        const head = new Float64Array(HEADER);
        const tail = new Float64Array(TAIL);
        if (size % 8 || size < (HEADER + TAIL) * 8) return null;
        await file.read(new Uint8Array(head.buffer), 0, HEADER * 8, 0);
        await file.read(new Uint8Array(tail.buffer), 0, TAIL * 8, size - TAIL * 8);
        if (head[1] !== FORMAT || !validHeader(head, size / 8) || !(await boundToManifest(siteDir, head))) return null;
        return { cityBytes: tail[0]!, digest: new Uint8Array(tail.buffer, 8, DIGEST_BYTES) };
      } finally {
        await file.close();
      }
    } catch {
      return null;
    }
  }

  /** Whether `stats` (of the file at `path`, or its variant) are those recorded. */
  matches(path: string, slot: Slot, stats: FileStat): boolean {
    const i = this.find(path);
    return i >= 0 && this.matchesAt(i, slot, stats);
  }

  /** The slots the build recorded for the `i`th path: the file, and the `.gz`/`.br` it wrote beside it. */
  slotsAt(i: number): Slot[] {
    return ([0, 1, 2] as const).filter((slot) => this.hasSlot(i, slot));
  }

  /** Whether the build recorded the `slot`th file of the `i`th path (the file itself always; a `.gz`/`.br` when it wrote one). */
  hasSlot(i: number, slot: Slot): boolean {
    return slot === 0 || this.data[HEADER + i * SLOTS + slot * FIELDS] !== 0;
  }

  matchesAt(i: number, slot: Slot, stats: FileStat): boolean {
    return sameStat(stats, this.data, HEADER + i * SLOTS + slot * FIELDS);
  }
}

/** Whether the cache was written for the site's manifest as it is (its inode, size, mtime and ctime). */
async function boundToManifest(siteDir: string, head: Float64Array): Promise<boolean> {
  const own = await lstat(join(siteDir, MANIFEST_PATH)).catch(() => null);
  return !!own?.isFile() && sameStat(own, head, 3);
}

/**
 * Why what has the stat cache's name is not a cache a build wrote, which a build must leave as it
 * is (a directory, a link, someone's file); null when the name is free or holds a cache of ours
 * (a regular file that begins with the format's magic number).
 */
export async function foreignStatCache(siteDir: string): Promise<string | null> {
  const path = siteSiblings(siteDir).statCache;
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!stats) return null;
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isDirectory()) return 'a directory';
  if (!stats.isFile()) return 'not a regular file';
  const head = new Float64Array(1);
  if (stats.size >= 8) {
    const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      await file.read(new Uint8Array(head.buffer), 0, 8, 0);
    } finally {
      await file.close();
    }
  }
  return head[0] === MAGIC ? null : 'a file no build wrote';
}
