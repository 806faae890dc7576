import { dirname, relative } from 'node:path';
import { syncDir } from '../fs/durable.js';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import { errnoAdvice, errnoWords } from '../fs/errno-words.js';
import { isErrno } from '../fs/fs-error.js';
import { markDurable, markUnsynced } from './durable-marks.js';

// A durable build's sync that failed (fdatasync of a file, fsync of a directory), said: which file,
// the errno in words, what to do, and whether the site was published. A failed sync may have
// dropped what it was to write (the kernel marks the pages clean, or forgets the error: fsyncgate),
// so a later sync that succeeds proves nothing: nothing is synced again. Before the swap the new
// tree is dropped; after it (the site's parent directory) the site is in place but maybe not on
// disk, and a mark beside it says so until a durable build has written it whole again.

const SYNCS = new Set(['fsync', 'fdatasync']);

type Errno = NodeJS.ErrnoException;

/** Whether `error` is a failed sync's. */
export function isSyncError(error: unknown): error is Errno {
  return isErrno(error) && SYNCS.has(error.syscall ?? '');
}

const wordsOf = (error: Errno) => errnoWords(error.code) ?? error.message;
const adviceOf = (error: Errno) =>
  (errnoAdvice(error.code) ?? 'check the disk and its file system').replace(/,? (?:and |then )?try again$/, '');

/** A sync of the new tree (`staging`) failed before its swap: nothing was published. */
export function unsyncedError(error: Errno, staging: string, outDir: string): CitiesApiError {
  const path = error.path === undefined ? undefined : relative(staging, error.path);
  const what =
    path === undefined || path.startsWith('..')
      ? (error.path ?? 'a file of the new site')
      : path === ''
        ? `the new site's directory (for ${outDir})`
        : `${path} of the new site (for ${outDir})`;
  return new CitiesApiError(
    `cannot sync ${what} to disk (${error.syscall}): ${wordsOf(error)}; ${adviceOf(error)}, then build again (${error.code}; the site was left as it was, nothing of the new one kept)`,
    1,
  );
}

/** The site's parent could not be synced after the swap: the new site is in place (`published`), but may not survive a power loss. */
export function unsyncedSwapError(error: Errno, outDir: string): CitiesApiError {
  const failure = new CitiesApiError(
    `the new site ${outDir} is published, but it may not be durable: syncing ${dirname(outDir)} to disk (${error.syscall}) failed: ${wordsOf(error)}, and a power loss may bring back the previous site; ${adviceOf(error)}, then build again with ${optionNamed('durable')}, which writes every file again (${error.code})`,
    1,
  );
  // A field, not a class: it crosses from a build's thread as the error's fields do (proc/error-data.ts).
  return Object.assign(failure, { published: true });
}

/** Whether a build's error is that of one that put its new site in place all the same (unsyncedSwapError). */
export function publishedAnyway(error: unknown): boolean {
  return error instanceof CitiesApiError && (error as { published?: unknown }).published === true;
}

/**
 * Syncs the site's parent after a durable swap; then what ends the build: the site marked durable (durable-marks.ts), or (the
 * sync failed: the site marked at once) the failure thrown, once the build has tidied up.
 */
export async function syncSwap(outDir: string): Promise<() => Promise<void>> {
  const failed = await syncDir(dirname(outDir)).then(
    () => undefined,
    (error: unknown) => error ?? new Error('sync failed'),
  );
  if (failed === undefined) return () => markDurable(outDir);
  await markUnsynced(outDir);
  return () => Promise.reject(isSyncError(failed) ? unsyncedSwapError(failed, outDir) : failed);
}
