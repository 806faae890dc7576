import type { FileStat } from '../fs/file-output.js';

// What git's index does for a work tree, for a site: the inode, size, mtime and ctime each file
// had when the build wrote or checked it (ctime too: an edit that puts the mtime back, even through
// a hard link from outside the site, moves it, and nothing but the kernel can set it), kept beside the site (`.NAME.stat-cache`, never inside: the
// site's bytes stay deterministic). A file whose lstat still shows them holds the bytes the
// manifest lists, so a rebuild trusts it without reading it; any other file is read or rewritten.
// The cache is bound to the manifest's own inode, size, mtime and ctime: a site with another manifest
// (a killed build, a copy, an edit) has no records at all. Deleting the cache costs one rebuild
// that reads every file (as does a cache of formats 1 and 2, which recorded no ctime). Format 4 ends with the digest of the dataset file the site was built
// from and its cities' JSON bytes (a rebuild from the same file then validates nothing again).
// This module is that file's format; stat-cache.ts reads it, stat-records.ts writes it.

/** Per file of the manifest: inode, size, mtime, ctime of the file, then of its `.gz`, then of its `.br` (0s: none). */
export const SLOTS = 12;
export const FIELDS = 4;
export const MAGIC = 0x63617069;
/** Without, then with, the dataset's record at the end. */
export const FORMAT_PLAIN = 3;
export const FORMAT = 4;
export const HEADER = 3 + FIELDS;
/** Format 4's last numbers: the cities' JSON bytes, then the dataset file's 32-byte digest. */
export const TAIL = 5;
export const DIGEST_BYTES = 32;

/** What a site records of the dataset file it was built from. */
export interface DatasetRecord {
  /** datasetHash's digest of the file. */
  readonly digest: Uint8Array;
  /** The JSON bytes of its cities (CityTable.jsonBytes). */
  readonly cityBytes: number;
}
/** Paths per piece the cache is written in, and per block of records (about 300 KB). */
export const PIECE_PATHS = 4096;

/** 0 for the file itself, 1 for its `.gz`, 2 for its `.br` (the order of VARIANTS). */
export type Slot = 0 | 1 | 2;

/** Whether `a` are the stats recorded at `at` of `data` (inode, size, mtime, ctime; a real inode). */
export function sameStat(a: FileStat, data: Float64Array, at: number): boolean {
  return (
    data[at] === a.ino &&
    data[at + 1] === a.size &&
    data[at + 2] === a.mtimeMs &&
    data[at + 3] === a.ctimeMs &&
    a.ino !== 0
  );
}

/** Whether a cache's first numbers (its magic, a known format, its count of paths) fit its length (in numbers). */
export function validHeader(head: Float64Array, length: number): boolean {
  const count = head[2]!;
  return (
    head[0] === MAGIC &&
    Number.isInteger(count) &&
    length === HEADER + count * SLOTS + (head[1] === FORMAT ? TAIL : head[1] === FORMAT_PLAIN ? 0 : NaN)
  );
}
