import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isSyncError, syncSwap, unsyncedError } from './sync-failure.js';
import type { SpaceGuard } from './disk-space.js';
import { CitiesApiError, type Problem, wordingOf } from '../core/errors.js';
import { VARIANTS } from './compression.js';
import { keepForeignFiles, SiteOwnership } from './foreign-files.js';
import { MANIFEST_PATH, type Manifest } from '../site/manifest.js';
import { readSiteFiles, type SiteFiles } from './manifest-file.js';
import { placeManifest, settledStats } from './place-manifest.js';
import { removeTree } from '../fs/remove-tree.js';
import { assemble, type SiteEntry } from './site-assembler.js';
import { retireTree } from './retire-tree.js';
import { lockSite, siteSiblings } from '../fs/lock.js';
import { StatCache } from './stat-cache.js';
import { writeStatCache } from './stat-records.js';
import type { DatasetRecord, Slot } from './stat-cache-format.js';
import { fileSystemError, isErrno } from '../fs/fs-error.js';
import { SITE_ROLE } from './site-path.js';
import { recoverSite } from './site-recovery.js';
import { asidePath, swapIn, syncTree } from './site-swap.js';
import { isDurable } from './durable-marks.js';

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
  /**
   * Entries of someone's put in the site directory while the build ran, where the new site has a
   * file of its own: kept in the previous tree (`leftover`), which stays for them.
   */
  readonly stranded?: readonly string[];
}

/** How the site is written; its `.gz`/`.br` are made as the manifest's settings say (`compression`). */
export interface WriteOptions {
  /** Reuse nothing of the old site: every file is written anew. */
  readonly force?: boolean;
  /**
   * Sync every file written (fdatasync; linked too, unless a durable build published the old tree), then every directory
   * of the new tree, before the swap, and the site's parent after it: a power loss, not only a kill, leaves one whole site.
   */
  readonly durable?: boolean | undefined;
  /** The site's lock is held already, by this build's caller: not taken again. */
  readonly locked?: boolean | undefined;
  /** Stops the build when free space runs low. */
  readonly guard?: SpaceGuard;
  readonly onProgress?: (entriesDone: number) => void;
  /** Directories of the new site (relative, parents first), made before its files. */
  readonly directories?: readonly string[];
  /** What the stat cache records of the dataset file the site is built from. */
  readonly dataset?: DatasetRecord | undefined;
  /** Told what the build left as it found it and why (what has the stat cache's name but is not one). */
  readonly onWarning?: ((warning: Problem) => void) | undefined;
  /** Why the site found in place (read holding its lock) must not be replaced, if it must not: thrown, nothing written. */
  readonly refuse?: ((old: SiteFiles) => Error | undefined) | undefined;
  /**
   * Runs the swap (the two renames), or refuses it by throwing (nothing swapped in, the new tree
   * removed): a build's check, under its dataset's lock, of the dataset against what it read,
   * which says whether the new site comes in marked behind its dataset (site-swap.ts).
   */
  readonly atSwap?: ((swap: (behind: boolean) => Promise<void>) => Promise<void>) | undefined;
}

/**
 * Writes a whole site atomically and incrementally: a new tree is assembled next to the old one
 * (unchanged files are hard-linked, so they keep their inode and mtime; the rest are written;
 * entries that are not the site's are carried over), synced to disk when `durable` (the files
 * written, then the directories), then swapped in with two renames, and the stat cache is written. A failed or killed build leaves the old site. `outDir` must be a real
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
  EDQUOT: 'free some space or raise the disk quota',
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
        `cannot build ${outDir}: ${wordingOf(error)}; ${advice} and build again (the site was left as it was)`,
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
  const release = options.locked ? async () => {} : await lockSite(outDir);
  try {
    await recoverSite(outDir);
    const old = await readSiteFiles(outDir);
    const refusal = old && options.refuse?.(old);
    if (refusal) throw refusal;
    if (!old && (await hasEntries(outDir))) {
      throw new CitiesApiError(
        `${outDir} exists and is not a cities-api site; choose an empty or new directory (nothing was written)`,
        2,
      );
    }
    const { staging } = siteSiblings(outDir);
    const previous = await asidePath(siteSiblings(outDir).previous);
    await removeTree(staging);
    try {
      await mkdir(staging);
      // The site directory keeps its permissions (a host may need them).
      const own = await lstat(outDir).catch(() => null);
      if (own) await chmod(staging, own.mode & 0o7777);
      const cache = old && !options.force ? await StatCache.read(outDir, old) : null;
      const syncLinked = !!options.durable && !options.force && !(await isDurable(outDir));
      const compression = manifest.settings.compression;
      const site = await assemble(outDir, staging, old, cache, entries, { ...options, compression, syncLinked });
      const { files } = site;
      const inNewSite = (path: string) =>
        path === MANIFEST_PATH ||
        files.find(path) >= 0 ||
        VARIANTS.some((v) => path.endsWith(v) && files.compressed(files.find(path.slice(0, -v.length))));
      const owner = new SiteOwnership(old);
      const { removed, kept, carried } = await keepForeignFiles(outDir, staging, owner, inNewSite);
      const manifestStats = await placeManifest(outDir, staging, old, manifest, files, {
        reuseOld: options.force ? 'no' : cache ? 'as built' : 'if same bytes',
        durable: !!options.durable,
        syncLinked,
      });
      if (options.durable) await syncTree(staging, site.directories, kept, carried, syncLinked);
      let hadOld = false;
      const swap = async (behind?: boolean) =>
        void (hadOld = await swapIn(outDir, staging, previous, { behind, durable: options.durable }));
      await (options.atSwap ? options.atSwap(swap) : swap());
      // The new site is in place: what follows only tidies, and cannot fail the build but for a
      // durable swap's sync (a power loss now brings back the new site; before, one whole site).
      const synced = options.durable ? await syncSwap(outDir) : undefined;
      const retired = hadOld
        ? await retireTree(previous, outDir, { owner, inSite: inNewSite, carried }).catch((error: Error) => ({
            moved: [],
            stranded: [],
            failure: error.message,
          }))
        : undefined;
      // Linked files' ctimes, moved by the links and by the old tree's removal, are taken again.
      const name = (i: number, slot: Slot) => files.path(i) + (slot ? VARIANTS[slot - 1] : '');
      site.records.settle(outDir, name);
      const settled = await settledStats(outDir, manifestStats.stats);
      await writeStatCache(outDir, options.onWarning, () =>
        site.records.write(outDir, files.sorted(), settled, options.dataset),
      );
      const written = site.written + (manifestStats.reused ? 0 : 1);
      const unchanged = site.unchanged + (manifestStats.reused ? 1 : 0);
      const stats = {
        files: written + unchanged,
        written,
        unchanged,
        removed,
        kept: [...kept, ...(retired?.moved ?? [])].sort(),
      };
      await synced?.();
      if (retired?.stranded.length) return { ...stats, leftover: previous, stranded: retired.stranded };
      return { ...stats, ...(retired?.failure && { leftover: `${previous}: ${retired.failure}` }) };
    } catch (error) {
      await removeTree(staging);
      throw isSyncError(error) ? unsyncedError(error, staging, outDir) : error;
    }
  } finally {
    await release();
  }
}

/** Whether a directory holds anything at all (a link or an empty directory counts). */
async function hasEntries(dir: string): Promise<boolean> {
  return (await readdir(dir).catch(() => [])).length > 0;
}
