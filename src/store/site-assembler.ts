import { lstatSync, unlinkSync, type Stats } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SpaceGuard } from './disk-space.js';
import { linkEntry, partsOf, reuse, sha256, writeParts, type Body } from '../fs/file-output.js';
import { VARIANTS, writeCompressed } from './compression.js';
import type { SiteFiles } from './manifest-file.js';
import type { Compression } from '../site/spec.js';
import { runBounded } from '../fs/run-bounded.js';
import { holdsBytes } from './site-check.js';
import { RealDirs } from './stat-check.js';
import type { StatCache } from './stat-cache.js';
import type { Slot } from './stat-cache-format.js';
import { StatRecords } from './stat-records.js';
import { FileList } from '../fs/file-list.js';
import type { FileStat } from '../fs/file-output.js';
import { WritePool } from './write-pool.js';

export interface SiteEntry {
  readonly path: string;
  /** The bytes, or for large files the parts to write one after the other. */
  readonly body: Body;
  /** Also write `.gz` and `.br` siblings (for hosts and sirv to serve precompressed). */
  readonly compress?: boolean;
  /** Told once the file (and its siblings) is in the new tree, with its path there, or why it is not. */
  readonly placed?: Placed;
}

export type Placed = (outcome: { readonly file: string } | { readonly error: unknown }) => void;

export interface AssembleOptions {
  /** How entries that ask for `.gz`/`.br` get them (`none`: they get none). */
  readonly compression: Compression;
  /** Reuse nothing of the old tree: every file is written anew. */
  readonly force?: boolean;
  readonly guard?: SpaceGuard;
  readonly onProgress?: (entriesDone: number) => void;
  /** Directories (relative, parents first) the entries go to, made before any file is written; others are made as needed. */
  readonly directories?: readonly string[];
}

export interface Assembled {
  /** Every entry: path, sha256 (the manifest's `files`), whether written with `.gz`/`.br`. */
  readonly files: FileList;
  /** Their stat records, by ordinal in `files`. */
  readonly records: StatRecords;
  readonly written: number;
  readonly unchanged: number;
}

const IN_FLIGHT = 48;

/**
 * Writes every entry into `staging`. A file of the old tree is reused (hard-linked: it keeps its
 * inode and mtime) only when the old manifest lists the same bytes for it and the file is a
 * regular file reached through real directories that either still shows the inode, size, mtime and ctime
 * the stat cache recorded or, read, holds those bytes (a `.gz`/`.br` is decompressed; it is reused
 * only when the old site made it at the same level). Anything else (edited, truncated, replaced,
 * turned into a link or a directory, missing) is written anew.
 */
export async function assemble(
  outDir: string,
  staging: string,
  old: SiteFiles | null,
  cache: StatCache | null,
  entries: Iterable<SiteEntry> | AsyncIterable<SiteEntry>,
  options: AssembleOptions,
): Promise<Assembled> {
  const files = new FileList();
  const records = new StatRecords();
  const counts = { written: 0, unchanged: 0, entries: 0 };
  const made = new Map<string, Promise<unknown>>();
  const ensureDir = (dir: string) => made.get(dir) ?? made.set(dir, mkdir(dir, { recursive: true })).get(dir)!;
  const dirs = new RealDirs(outDir);
  const level = options.compression === 'none' ? null : options.compression;
  // A `.gz`/`.br` made at another level decompresses to the same page but is not what this build makes.
  const sameLevel = old?.settings.compression === options.compression;

  /** Links the old file into staging if it can be trusted to hold the entry's bytes (`hash`, and `bytes` when in one buffer); its stats, or null. */
  const reuseOld = async (
    path: string,
    slot: Slot,
    hash: string,
    bytes: Uint8Array | undefined,
  ): Promise<FileStat | null> => {
    const name = slot ? path + VARIANTS[slot - 1] : path;
    if (!dirs.ok(dirname(path))) return null;
    const from = join(outDir, name);
    const to = join(staging, name);
    await ensureDir(dirname(to));
    // Its record is compared before the link (which moves the ctime), then what was linked is
    // checked to be that file (else its bytes are read): nothing can replace it unseen between
    // the check and the link. Anything else linked is unlinked again.
    const prior = cache ? lstatSync(from, { throwIfNoEntry: false }) : undefined;
    const vouched = !!prior?.isFile() && !!cache?.matches(path, slot, prior);
    const linked = linkEntry(from, to);
    if (linked === null) return null;
    if (linked) {
      if (
        linked.isFile() &&
        ((vouched && sameFile(prior!, linked)) || (await holdsBytes(to, slot, linked.size, hash, bytes)))
      )
        return linked;
      unlinkSync(to);
      return null;
    }
    // Where it cannot be linked: checked, then copied.
    const stats = await lstat(from).catch(() => null);
    if (!stats?.isFile()) return null;
    if (!cache?.matches(path, slot, stats) && !(await holdsBytes(from, slot, stats.size, hash, bytes))) return null;
    return reuse(from, to, stats);
  };

  const wrote = async (file: number, stats: readonly FileStat[], slots: readonly Slot[]) => {
    slots.forEach((slot, i) => records.set(file, slot, stats[i]!));
    counts.written += slots.length;
    await options.guard?.wrote(stats.reduce((n, s) => n + s.size, 0));
  };

  for (const dir of options.directories ?? []) await ensureDir(join(staging, dir));
  let pool: WritePool | undefined;
  const one = (entry: SiteEntry) =>
    place(entry).then(
      () => entry.placed?.({ file: join(staging, entry.path) }),
      (error: unknown) => {
        entry.placed?.({ error });
        throw error;
      },
    );
  const place = async (entry: SiteEntry) => {
    const parts = partsOf(entry.body);
    const hash = sha256(parts);
    const compress = !!entry.compress && !!level;
    const file = files.add(entry.path, hash, compress);
    const slots: Slot[] = compress ? [0, 1, 2] : [0];
    const single = Array.isArray(parts) && parts.length === 1 ? (parts[0] as Uint8Array) : undefined;
    let todo = slots;
    if (!options.force && old && old.files.hashOf(entry.path) === hash) {
      todo = [];
      for (const slot of slots) {
        const kept = (slot === 0 || sameLevel) && (await reuseOld(entry.path, slot, hash, single));
        if (kept) {
          records.setLinked(file, slot, kept);
          counts.unchanged++;
        } else todo.push(slot);
      }
    }
    const target = join(staging, entry.path);
    const pooled =
      todo.length === slots.length && single && (pool ??= new WritePool(level)).write(target, single, compress);
    if (pooled) {
      const flat = await pooled;
      await wrote(
        file,
        [0, 1, 2].slice(0, slots.length).map((i) => ({
          ino: flat[i * 4]!,
          size: flat[i * 4 + 1]!,
          mtimeMs: flat[i * 4 + 2]!,
          ctimeMs: flat[i * 4 + 3]!,
        })),
        slots,
      );
    } else if (todo.length) {
      await ensureDir(dirname(target));
      const stats: FileStat[] = [];
      for (const slot of todo)
        stats.push(
          await (slot
            ? writeCompressed(target + VARIANTS[slot - 1], parts, VARIANTS[slot - 1]!, level!)
            : writeParts(target, parts)),
        );
      await wrote(file, stats, todo);
    }
    options.onProgress?.(++counts.entries);
  };
  await runBounded(entries, one, IN_FLIGHT).finally(() => pool?.close());
  return { files, records, written: counts.written, unchanged: counts.unchanged };
}

/** Whether two lstats are of the same file, unchanged but for its ctime (a link moves it). */
function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}
