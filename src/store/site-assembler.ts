import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SpaceGuard } from './disk-space.js';
import { partsOf, sha256, writeParts, type Body } from '../fs/file-output.js';
import { syncFile } from '../fs/durable.js';
import { VARIANTS, writeCompressed } from './compression.js';
import type { SiteFiles } from './manifest-file.js';
import type { Compression, CompressionLevel } from '../site/spec.js';
import { runBounded } from '../fs/run-bounded.js';
import { OldTree } from './old-tree.js';
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
  /** Sync each file written to disk (fdatasync) before resolving; with `syncLinked`, each linked from the old tree too. */
  readonly durable?: boolean | undefined;
  readonly syncLinked?: boolean | undefined;
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
  /** The directories (relative) that hold the entries. */
  readonly directories: ReadonlySet<string>;
}

const IN_FLIGHT = 48;

/**
 * Writes every entry into `staging`; when `durable`, each file written is synced to disk
 * (fdatasync) before this resolves, and each linked one when `syncLinked` (else the old tree's, synced by the build that wrote it). A file of the old tree is reused (hard-linked: it keeps its
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
  const assembly = new Assembly(outDir, staging, old, cache, options);
  for (const dir of options.directories ?? []) await assembly.ensureDir(join(staging, dir));
  await runBounded(entries, (entry) => assembly.one(entry), IN_FLIGHT)
    .then(() => assembly.settle())
    .finally(() => assembly.close());
  return assembly.result();
}

class Assembly {
  private readonly files = new FileList();
  private readonly records = new StatRecords();
  private readonly counts = { written: 0, unchanged: 0, entries: 0 };
  private readonly made = new Map<string, Promise<unknown>>();
  private readonly directories = new Set<string>();
  private readonly oldTree: OldTree;
  private readonly level: CompressionLevel | null;
  /** A `.gz`/`.br` made at another level decompresses to the same page but is not what this build makes. */
  private readonly sameLevel: boolean;
  private pool: WritePool | undefined;

  constructor(
    outDir: string,
    private readonly staging: string,
    private readonly old: SiteFiles | null,
    cache: StatCache | null,
    private readonly options: AssembleOptions,
  ) {
    this.oldTree = new OldTree(outDir, staging, cache, (dir) => this.ensureDir(dir));
    this.level = options.compression === 'none' ? null : options.compression;
    this.sameLevel = old?.settings.compression === options.compression;
  }

  ensureDir(dir: string): Promise<unknown> {
    return this.made.get(dir) ?? this.made.set(dir, mkdir(dir, { recursive: true })).get(dir)!;
  }

  one(entry: SiteEntry): Promise<void> {
    return this.place(entry).then(
      () => entry.placed?.({ file: join(this.staging, entry.path) }),
      (error: unknown) => {
        entry.placed?.({ error });
        throw error;
      },
    );
  }

  /** Waits until the writer threads' files are on disk (the others are synced as they are written). */
  settle(): Promise<void> | undefined {
    return this.pool?.settle();
  }

  close(): Promise<void> | undefined {
    return this.pool?.close();
  }

  result(): Assembled {
    const { files, records, counts, directories } = this;
    return { files, records, written: counts.written, unchanged: counts.unchanged, directories };
  }

  private async place(entry: SiteEntry): Promise<void> {
    const parts = partsOf(entry.body);
    const hash = sha256(parts);
    const compress = !!entry.compress && !!this.level;
    const file = this.files.add(entry.path, hash, compress);
    this.directories.add(dirname(entry.path));
    const slots: Slot[] = compress ? [0, 1, 2] : [0];
    const single = Array.isArray(parts) && parts.length === 1 ? (parts[0] as Uint8Array) : undefined;
    const todo =
      !this.options.force && this.old?.files.hashOf(entry.path) === hash
        ? await this.keepOld(entry.path, file, slots, hash, single)
        : slots;
    const target = join(this.staging, entry.path);
    const pooled =
      todo.length === slots.length &&
      single &&
      (this.pool ??= new WritePool(this.level, !!this.options.durable)).write(target, single, compress);
    if (pooled) {
      const flat = await pooled;
      const stats = slots.map((_, i) => ({
        ino: flat[i * 4]!,
        size: flat[i * 4 + 1]!,
        mtimeMs: flat[i * 4 + 2]!,
        ctimeMs: flat[i * 4 + 3]!,
      }));
      await this.wrote(file, stats, slots);
    } else if (todo.length) {
      await this.ensureDir(dirname(target));
      const stats: FileStat[] = [];
      for (const slot of todo) {
        const path = slot ? target + VARIANTS[slot - 1] : target;
        stats.push(
          await (slot ? writeCompressed(path, parts, VARIANTS[slot - 1]!, this.level!) : writeParts(path, parts)),
        );
        if (this.options.durable) await syncFile(path);
      }
      await this.wrote(file, stats, todo);
    }
    this.options.onProgress?.(++this.counts.entries);
  }

  /** Links what can be kept of the old tree's file and its siblings; the slots left to write. */
  private async keepOld(
    path: string,
    file: number,
    slots: readonly Slot[],
    hash: string,
    single: Uint8Array | undefined,
  ): Promise<Slot[]> {
    const todo: Slot[] = [];
    for (const slot of slots) {
      const kept = (slot === 0 || this.sameLevel) && (await this.oldTree.reuse(path, slot, hash, single));
      if (kept) {
        if (this.options.syncLinked) await syncFile(join(this.staging, slot ? path + VARIANTS[slot - 1] : path));
        this.records.setLinked(file, slot, kept);
        this.counts.unchanged++;
      } else todo.push(slot);
    }
    return todo;
  }

  private async wrote(file: number, stats: readonly FileStat[], slots: readonly Slot[]): Promise<void> {
    slots.forEach((slot, i) => this.records.set(file, slot, stats[i]!));
    this.counts.written += slots.length;
    await this.options.guard?.wrote(stats.reduce((n, s) => n + s.size, 0));
  }
}
