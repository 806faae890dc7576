import { chmod, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import fg from 'fast-glob';
import type { SpaceGuard } from './disk-space.js';
import { CitiesApiError } from '../core/errors.js';
import { reuse, sha256, writeParts } from '../fs/file-output.js';
import { VARIANTS } from './compression.js';
import { keepForeignFiles, SiteOwnership } from './foreign-files.js';
import { MANIFEST_PATH, manifestText, type Manifest, type ManifestFiles } from '../site/manifest.js';
import type { FileList } from '../fs/file-list.js';
import { readSiteFiles, type SiteFiles } from './manifest-file.js';
import { removeTree } from '../fs/remove-tree.js';
import { assemble, type SiteEntry } from './site-assembler.js';
import { holdsBytes } from './site-check.js';
import { isAlive, lockSite, siteSiblings } from '../fs/lock.js';
import { StatCache, type DatasetRecord, type Slot } from './stat-cache.js';
import { fileSystemError, isErrno } from '../fs/fs-error.js';
import { SITE_ROLE } from './site-path.js';
import type { FileStat } from '../fs/file-output.js';

export type { Placed, SiteEntry } from './site-assembler.js';

export interface WriteStats {
  readonly files: number;
  readonly written: number;
  readonly unchanged: number;
  readonly removed: number;
  /** Entries of the site directory that are not the site's, kept as they were (directories end with `/`). */
  readonly kept: readonly string[];
  /** The previous tree, moved aside, when it could not be deleted (the next build tries again), and why. */
  readonly leftover?: string;
}

/** How the site is written; its `.gz`/`.br` are made as the manifest's settings say (`compression`). */
export interface WriteOptions {
  /** Reuse nothing of the old site: every file is written anew. */
  readonly force?: boolean;
  /** Stops the build when free space runs low. */
  readonly guard?: SpaceGuard;
  readonly onProgress?: (entriesDone: number) => void;
  /** Directories of the new site (relative, parents first), made before its files. */
  readonly directories?: readonly string[];
  /** What the stat cache records of the dataset file the site is built from. */
  readonly dataset?: DatasetRecord | undefined;
}

/**
 * Writes a whole site atomically and incrementally: a new tree is assembled next to the old one
 * (unchanged files are hard-linked, so they keep their inode and mtime; the rest are written;
 * entries that are not the site's are carried over), then swapped in with two renames, and the
 * stat cache is written. A failed or killed build leaves the old site. `outDir` must be a real
 * path (resolveSiteDir): a symbolic link there would be renamed, not its target.
 */
export async function writeSite(
  outDir: string,
  entries: Iterable<SiteEntry> | AsyncIterable<SiteEntry>,
  manifest: Omit<Manifest, 'files'>,
  options: WriteOptions,
): Promise<WriteStats> {
  return writeSiteLocked(outDir, entries, manifest, options).catch(async (error: Error) => {
    throw isErrno(error) ? await fileSystemError(error, SITE_ROLE, outDir) : environmentError(error, outDir);
  });
}

const ENVIRONMENT: Record<string, string> = {
  ENOSPC: 'free some space',
  EDQUOT: 'free some space (disk quota)',
  EACCES: 'check the permissions of the site directory and its parent',
  EPERM: 'check the permissions of the site directory and its parent',
  EROFS: 'build on a writable filesystem',
  EMFILE: 'raise the open files limit (ulimit -n)',
};

/** A failure of the machine whose errno is only in its message (a writer thread's comes with its code, through fileSystemError), said with the path and what to do. */
function environmentError(error: Error, outDir: string): Error {
  const code = (error as NodeJS.ErrnoException).code ?? /^(E[A-Z]+):/.exec(error.message)?.[1];
  const advice = code && ENVIRONMENT[code];
  return advice
    ? new CitiesApiError(
        `cannot build ${outDir}: ${error.message}; ${advice} and build again (the site was left as it was)`,
        1,
      )
    : error;
}

async function writeSiteLocked(
  outDir: string,
  entries: Iterable<SiteEntry> | AsyncIterable<SiteEntry>,
  manifest: Omit<Manifest, 'files'>,
  options: WriteOptions,
): Promise<WriteStats> {
  await mkdir(dirname(outDir), { recursive: true });
  const release = await lockSite(outDir);
  try {
    await recoverSite(outDir);
    const old = await readSiteFiles(outDir);
    if (!old && (await hasEntries(outDir))) {
      throw new CitiesApiError(
        `${outDir} exists and is not a cities-api site; choose an empty or new directory (nothing was written)`,
        2,
      );
    }
    const { staging, previous } = siteSiblings(outDir);
    await removeTree(staging);
    try {
      await mkdir(staging);
      // The site directory keeps its permissions (a host may need them).
      const own = await lstat(outDir).catch(() => null);
      if (own) await chmod(staging, own.mode & 0o7777);
      const cache = old && !options.force ? await StatCache.read(outDir, old) : null;
      const site = await assemble(outDir, staging, old, cache, entries, {
        ...options,
        compression: manifest.settings.compression,
      });
      const { files } = site;
      const inNewSite = (path: string) =>
        path === MANIFEST_PATH ||
        files.find(path) >= 0 ||
        VARIANTS.some((v) => path.endsWith(v) && files.compressed(files.find(path.slice(0, -v.length))));
      const { removed, kept } = await keepForeignFiles(outDir, staging, new SiteOwnership(old), inNewSite);
      const manifestStats = await placeManifest(
        outDir,
        staging,
        old,
        manifest,
        files,
        options.force ? 'no' : cache ? 'as built' : 'if same bytes',
      );
      const hadOld = await swapIn(outDir, staging, previous);
      // The new site is in place: what follows only tidies, and cannot fail the build.
      const leftover = hadOld
        ? await removeTree(previous).then(
            () => undefined,
            (error: Error) => `${previous}: ${error.message}`,
          )
        : undefined;
      // Linked files' ctimes, moved by the links and by the old tree's removal, are taken again.
      const name = (i: number, slot: Slot) => files.path(i) + (slot ? VARIANTS[slot - 1] : '');
      site.records.settle(outDir, name);
      await site.records
        .write(outDir, files.sorted(), await settledStats(outDir, manifestStats.stats), options.dataset)
        .catch(() => rm(siteSiblings(outDir).statCache, { force: true }).catch(() => undefined));
      const written = site.written + (manifestStats.reused ? 0 : 1);
      const unchanged = site.unchanged + (manifestStats.reused ? 1 : 0);
      return { files: written + unchanged, written, unchanged, removed, kept, ...(leftover && { leftover }) };
    } catch (error) {
      await removeTree(staging);
      throw error;
    }
  } finally {
    await release();
  }
}

/**
 * Puts the manifest into staging: the old one, linked, when it says exactly the same and is as
 * built (the stat cache vouches for it) or holds the very bytes the build would write.
 */
async function placeManifest(
  outDir: string,
  staging: string,
  old: SiteFiles | null,
  manifest: Omit<Manifest, 'files'>,
  files: FileList,
  reuseOld: 'no' | 'as built' | 'if same bytes',
): Promise<{ stats: FileStat; reused: boolean }> {
  const to = join(staging, MANIFEST_PATH);
  await mkdir(dirname(to), { recursive: true });
  const order = files.sorted();
  const listed: ManifestFiles = {
    size: order.length,
    path: (i) => files.path(order[i]!),
    hash: (i) => files.hash(order[i]!),
  };
  // Made piece by piece as it is hashed or written: a large site's manifest is never one string.
  const text: Iterable<Uint8Array> = {
    *[Symbol.iterator]() {
      for (const piece of manifestText(manifest, listed)) yield Buffer.from(piece);
    },
  };
  if (reuseOld !== 'no' && old && sameManifest(old, manifest, listed)) {
    const from = join(outDir, MANIFEST_PATH);
    const stats = await lstat(from).catch(() => null);
    const same =
      !!stats?.isFile() && (reuseOld === 'as built' || (await holdsBytes(from, 0, stats.size, sha256(text))));
    const linked = same && stats && (await reuse(from, to, stats));
    if (linked) return { stats: linked, reused: true };
  }
  return { stats: await writeParts(to, text), reused: false };
}

/** The manifest's stats now (its ctime moved if it was linked), when still the file placed. */
async function settledStats(outDir: string, placed: FileStat): Promise<FileStat> {
  const now = await lstat(join(outDir, MANIFEST_PATH)).catch(() => null);
  return now?.isFile() && now.ino === placed.ino && now.size === placed.size && now.mtimeMs === placed.mtimeMs
    ? now
    : placed;
}

/** Whether the old manifest says exactly what the new one would (so its file can be kept). */
function sameManifest(old: SiteFiles, manifest: Omit<Manifest, 'files'>, files: ManifestFiles): boolean {
  const { files: oldFiles, ...oldHead } = old;
  if (JSON.stringify(oldHead) !== JSON.stringify(manifest) || files.size !== oldFiles.size) return false;
  for (let i = 0; i < files.size; i++)
    if (oldFiles.path(i) !== files.path(i) || oldFiles.hash(i) !== files.hash(i)) return false;
  return true;
}

/** Whether a directory holds anything at all (a link or an empty directory counts). */
async function hasEntries(dir: string): Promise<boolean> {
  return (await readdir(dir).catch(() => [])).length > 0;
}

/** Moves the old site aside and the new one in (the old one back if that fails); whether there was an old one. */
async function swapIn(outDir: string, staging: string, previous: string): Promise<boolean> {
  let hadOld = true;
  try {
    await rename(outDir, previous);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    hadOld = false;
  }
  try {
    await rename(staging, outDir);
  } catch (error) {
    if (hadOld) await rename(previous, outDir);
    throw error;
  }
  return hadOld;
}

/** Holding the build lock, repairs what killed builds left beside a site that needs no writing. */
export async function tidySite(outDir: string): Promise<void> {
  const release = await lockSite(outDir);
  try {
    await recoverSite(outDir);
  } finally {
    await release();
  }
}

/**
 * Repairs what a killed build can leave: if the site was moved aside but the new one never
 * arrived, the previous site is moved back (only a real directory: never a link of that name);
 * staging trees, lock drafts and stat cache drafts of dead builders are removed (a link is
 * unlinked, never followed). Call it holding the build lock.
 */
export async function recoverSite(outDir: string): Promise<void> {
  const { parent, prefix } = siteSiblings(outDir);
  const leftovers = await fg(`${fg.escapePath(prefix)}{staging,previous,lock,stat-cache}-*`, {
    cwd: parent,
    dot: true,
    onlyFiles: false,
    deep: 1,
    followSymbolicLinks: false,
  });
  const exists = (path: string) =>
    lstat(path).then(
      () => true,
      () => false,
    );
  for (const name of leftovers.sort()) {
    const pid = Number.parseInt(name.slice(name.lastIndexOf('-') + 1), 10);
    if (pid !== process.pid && isAlive(pid)) continue;
    const path = join(parent, name);
    if (name.includes('.previous-') && !(await exists(outDir)) && (await lstat(path)).isDirectory())
      await rename(path, outDir);
    // What cannot be deleted (permissions) stays: it is in no build's way, and the next one tries again.
    else await removeTree(path).catch(() => undefined);
  }
}
