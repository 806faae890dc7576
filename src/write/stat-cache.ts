import { constants } from 'node:fs';
import { lstat, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeParts, type FileStat } from './file-output.js';
import { MANIFEST_PATH } from '../site/manifest.js';
import type { FileList } from './file-list.js';
import { siteSiblings } from './lock.js';

// What git's index does for a work tree, for a site: the inode, size and mtime each file had
// when the build wrote or checked it, kept beside the site (`.NAME.stat-cache`, never inside: the
// site's bytes stay deterministic). A file whose lstat still shows them holds the bytes the
// manifest lists, so a rebuild trusts it without reading it; any other file is read or rewritten.
// The cache is bound to the manifest's own inode, size and mtime: a site with another manifest
// (a killed build, a copy, an edit) has no records at all. Deleting the cache costs one rebuild
// that reads every file.

/** Per file of the manifest: inode, size, mtime of the file, then of its `.gz`, then of its `.br` (0s: none). */
export const SLOTS = 9;
const FIELDS = 3;
const MAGIC = 0x63617069;
const FORMAT = 1;
const HEADER = 6;
/** Paths per piece the cache is written in, and per block of records (about 300 KB). */
const PIECE_PATHS = 4096;

/** 0 for the file itself, 1 for its `.gz`, 2 for its `.br` (the order of VARIANTS). */
export type Slot = 0 | 1 | 2;

export function sameStat(a: FileStat, data: Float64Array, at: number): boolean {
  return data[at] === a.ino && data[at + 1] === a.size && data[at + 2] === a.mtimeMs && a.ino !== 0;
}

/** The records of a site's files, aligned with its manifest's paths (`paths()`, sorted). */
export class StatCache {
  private constructor(
    private readonly files: FileList,
    private readonly data: Float64Array,
  ) {}

  /** The site's cache, or null when it has none that belongs to its current manifest. */
  static async read(siteDir: string, manifest: { readonly files: FileList }): Promise<StatCache | null> {
    let bytes: Buffer;
    try {
      const file = await open(siteSiblings(siteDir).statCache, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        bytes = await file.readFile();
      } finally {
        await file.close();
      }
    } catch {
      return null;
    }
    if (bytes.length % 8 || bytes.length < HEADER * 8) return null;
    const data = new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    const count = manifest.files.size;
    if (data[0] !== MAGIC || data[1] !== FORMAT || data[2] !== count || data.length !== HEADER + count * SLOTS) return null;
    const own = await lstat(join(siteDir, MANIFEST_PATH)).catch(() => null);
    if (!own?.isFile() || !sameStat(own, data, 3)) return null;
    return new StatCache(manifest.files, data);
  }

  /** Whether `stats` (of the file at `path`, or its variant) are those recorded. */
  matches(path: string, slot: Slot, stats: FileStat): boolean {
    const i = this.files.find(path);
    return i >= 0 && this.matchesAt(i, slot, stats);
  }

  /** The slots the build recorded for the `i`th path: the file, and the `.gz`/`.br` it wrote beside it. */
  slotsAt(i: number): Slot[] {
    const at = HEADER + i * SLOTS;
    return ([0, 1, 2] as const).filter((slot) => slot === 0 || this.data[at + slot * FIELDS] !== 0);
  }

  matchesAt(i: number, slot: Slot, stats: FileStat): boolean {
    return sameStat(stats, this.data, HEADER + i * SLOTS + slot * FIELDS);
  }
}

/** Records gathered while a site is assembled, by the file's ordinal (FileList), in blocks (never a doubled copy). */
export class StatRecords {
  private readonly blocks: Float64Array[] = [];

  set(i: number, slot: Slot, stats: FileStat): void {
    const block = Math.floor(i / PIECE_PATHS);
    while (this.blocks.length <= block) this.blocks.push(new Float64Array(PIECE_PATHS * SLOTS));
    this.blocks[block]!.set([stats.ino, stats.size, stats.mtimeMs], (i % PIECE_PATHS) * SLOTS + slot * FIELDS);
  }

  /** Writes the cache of a site whose manifest lists the files of these ordinals (in its order) and has `manifestStats`, a piece at a time. */
  async write(siteDir: string, order: Uint32Array, manifestStats: FileStat): Promise<void> {
    const { blocks } = this;
    const pieces: Iterable<Uint8Array> = {
      *[Symbol.iterator]() {
        yield new Uint8Array(new Float64Array([MAGIC, FORMAT, order.length, manifestStats.ino, manifestStats.size, manifestStats.mtimeMs]).buffer);
        for (let from = 0; from < order.length; from += PIECE_PATHS) {
          const piece = new Float64Array(Math.min(PIECE_PATHS, order.length - from) * SLOTS);
          for (let n = 0; n * SLOTS < piece.length; n++) {
            const i = order[from + n]!;
            const block = blocks[Math.floor(i / PIECE_PATHS)];
            if (block) piece.set(block.subarray((i % PIECE_PATHS) * SLOTS, (i % PIECE_PATHS + 1) * SLOTS), n * SLOTS);
          }
          yield new Uint8Array(piece.buffer);
        }
      },
    };
    const { statCache } = siteSiblings(siteDir);
    const draft = `${statCache}-${process.pid}`;
    await rm(draft, { force: true });
    await writeParts(draft, pieces);
    await rename(draft, statCache);
  }
}
