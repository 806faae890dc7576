import { constants, lstatSync } from 'node:fs';
import { lstat, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeParts, type FileStat } from '../fs/file-output.js';
import { MANIFEST_PATH } from '../site/manifest.js';
import type { FileList } from '../fs/file-list.js';
import { siteSiblings } from '../fs/lock.js';

// What git's index does for a work tree, for a site: the inode, size, mtime and ctime each file
// had when the build wrote or checked it (ctime too: an edit that puts the mtime back, even through
// a hard link from outside the site, moves it, and nothing but the kernel can set it), kept beside the site (`.NAME.stat-cache`, never inside: the
// site's bytes stay deterministic). A file whose lstat still shows them holds the bytes the
// manifest lists, so a rebuild trusts it without reading it; any other file is read or rewritten.
// The cache is bound to the manifest's own inode, size, mtime and ctime: a site with another manifest
// (a killed build, a copy, an edit) has no records at all. Deleting the cache costs one rebuild
// that reads every file (as does a cache of formats 1 and 2, which recorded no ctime). Format 4 ends with the digest of the dataset file the site was built
// from and its cities' JSON bytes (a rebuild from the same file then validates nothing again).

/** Per file of the manifest: inode, size, mtime, ctime of the file, then of its `.gz`, then of its `.br` (0s: none). */
export const SLOTS = 12;
const FIELDS = 4;
const MAGIC = 0x63617069;
/** Without, then with, the dataset's record at the end. */
const FORMAT_PLAIN = 3;
const FORMAT = 4;
const HEADER = 3 + FIELDS;
/** Format 4's last numbers: the cities' JSON bytes, then the dataset file's 32-byte digest. */
const TAIL = 5;
const DIGEST_BYTES = 32;

/** What a site records of the dataset file it was built from. */
export interface DatasetRecord {
  /** datasetHash's digest of the file. */
  readonly digest: Uint8Array;
  /** The JSON bytes of its cities (CityTable.jsonBytes). */
  readonly cityBytes: number;
}
/** Paths per piece the cache is written in, and per block of records (about 300 KB). */
const PIECE_PATHS = 4096;

/** 0 for the file itself, 1 for its `.gz`, 2 for its `.br` (the order of VARIANTS). */
export type Slot = 0 | 1 | 2;

export function sameStat(a: FileStat, data: Float64Array, at: number): boolean {
  return (
    data[at] === a.ino &&
    data[at + 1] === a.size &&
    data[at + 2] === a.mtimeMs &&
    data[at + 3] === a.ctimeMs &&
    a.ino !== 0
  );
}

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

/** Whether a cache's first numbers (its magic, a known format, its count of paths) fit its length (in numbers). */
function validHeader(head: Float64Array, length: number): boolean {
  const count = head[2]!;
  return (
    head[0] === MAGIC &&
    Number.isInteger(count) &&
    length === HEADER + count * SLOTS + (head[1] === FORMAT ? TAIL : head[1] === FORMAT_PLAIN ? 0 : NaN)
  );
}

/** Whether the cache was written for the site's manifest as it is (its inode, size, mtime and ctime). */
async function boundToManifest(siteDir: string, head: Float64Array): Promise<boolean> {
  const own = await lstat(join(siteDir, MANIFEST_PATH)).catch(() => null);
  return !!own?.isFile() && sameStat(own, head, 3);
}

/** Records gathered while a site is assembled, by the file's ordinal (FileList), in blocks (never a doubled copy). */
export class StatRecords {
  private readonly blocks: Float64Array[] = [];
  /** Records of files linked from the old tree, as ordinal * 3 + slot (see settle). */
  private readonly linked: number[] = [];

  /** Records a file linked from the old tree: its ctime moves again when the old tree goes (settle). */
  setLinked(i: number, slot: Slot, stats: FileStat): void {
    this.set(i, slot, stats);
    this.linked.push(i * 3 + slot);
  }

  /**
   * Takes the ctime of each linked file again once the old tree is gone (a link made or removed
   * moves it). A file no longer showing the inode, size and mtime recorded keeps its old ctime:
   * the next build reads it.
   */
  settle(siteDir: string, name: (i: number, slot: Slot) => string): void {
    for (const key of this.linked) {
      const [i, slot] = [Math.floor(key / 3), (key % 3) as Slot];
      const block = this.blocks[Math.floor(i / PIECE_PATHS)]!;
      const at = (i % PIECE_PATHS) * SLOTS + slot * FIELDS;
      const now = lstatSync(join(siteDir, name(i, slot)), { throwIfNoEntry: false });
      if (now?.isFile() && block[at] === now.ino && block[at + 1] === now.size && block[at + 2] === now.mtimeMs)
        block[at + 3] = now.ctimeMs;
    }
  }

  set(i: number, slot: Slot, stats: FileStat): void {
    const block = Math.floor(i / PIECE_PATHS);
    while (this.blocks.length <= block) this.blocks.push(new Float64Array(PIECE_PATHS * SLOTS));
    this.blocks[block]!.set(
      [stats.ino, stats.size, stats.mtimeMs, stats.ctimeMs],
      (i % PIECE_PATHS) * SLOTS + slot * FIELDS,
    );
  }

  /**
   * Writes the cache of a site whose manifest lists the files of these ordinals (in its order)
   * and has `manifestStats`, a piece at a time, with the record of its dataset when known.
   */
  async write(siteDir: string, order: Uint32Array, manifestStats: FileStat, dataset?: DatasetRecord): Promise<void> {
    const { blocks } = this;
    const pieces: Iterable<Uint8Array> = {
      *[Symbol.iterator]() {
        yield new Uint8Array(
          new Float64Array([
            MAGIC,
            dataset ? FORMAT : FORMAT_PLAIN,
            order.length,
            manifestStats.ino,
            manifestStats.size,
            manifestStats.mtimeMs,
            manifestStats.ctimeMs,
          ]).buffer,
        );
        for (let from = 0; from < order.length; from += PIECE_PATHS) {
          const piece = new Float64Array(Math.min(PIECE_PATHS, order.length - from) * SLOTS);
          for (let n = 0; n * SLOTS < piece.length; n++) {
            const i = order[from + n]!;
            const block = blocks[Math.floor(i / PIECE_PATHS)];
            if (block) piece.set(block.subarray((i % PIECE_PATHS) * SLOTS, ((i % PIECE_PATHS) + 1) * SLOTS), n * SLOTS);
          }
          yield new Uint8Array(piece.buffer);
        }
        if (dataset) {
          const tail = new Float64Array(TAIL);
          tail[0] = dataset.cityBytes;
          new Uint8Array(tail.buffer, 8, DIGEST_BYTES).set(dataset.digest.subarray(0, DIGEST_BYTES));
          yield new Uint8Array(tail.buffer);
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
