import { setTimeout as sleep } from 'node:timers/promises';
import { basename, dirname, join } from 'node:path';
import { optionNamed, wordingOf } from '../core/errors.js';
import { fileSystemError, isErrno, type PathRole, withPath } from './fs-error.js';
import { isLiveHolder, whoHolds } from './lock-holder.js';
import { claimed, LockBusyError, type Release, takeLock } from './lock-file.js';

export { LockBusyError, type Release } from './lock-file.js';

const LOCK_ROLE: PathRole = { what: 'lock file' };

/**
 * The dataset a file cities-api keeps beside it is of (its lock, its write-ahead log, drafts, its
 * backup, the fold journal): a failure of such a file is said `PATH (of the dataset FILE)`.
 */
export const DATASET_SIDE_ROLE: PathRole = { what: 'dataset' };

/** Sibling paths a build uses next to its site directory (same filesystem, so renames are atomic). */
export function siteSiblings(outDir: string) {
  const parent = dirname(outDir);
  const name = basename(outDir);
  return {
    lock: join(parent, `.${name}.lock`),
    staging: join(parent, `.${name}.staging-${process.pid}`),
    previous: join(parent, `.${name}.previous-${process.pid}`),
    /** Kept beside the site for good: the stat records of its files (see stat-cache-format.ts). */
    statCache: join(parent, `.${name}.stat-cache`),
    /** Kept while the site in place was published by a durable build whose syncs failed (store/sync-failure.ts). */
    unsynced: join(parent, `.${name}.unsynced`),
    /** Kept while the site in place was published by a durable build with every sync done (store/durable-marks.ts). */
    durable: join(parent, `.${name}.durable`),
    prefix: `.${name}.`,
    parent,
  };
}

/**
 * Takes the site's build lock, so two builds never interleave: a second build fails with a
 * clear message while the first is alive; a dead builder's lock is taken over.
 */
export function lockSite(outDir: string): Promise<Release> {
  const { lock } = siteSiblings(outDir);
  // A full disk's ENOSPC (from write) carries no path: said with the lock's. An error naming the
  // draft (its directory read-only) is left to the build's caller, which names the site directory.
  return takeLock(lock, buildRunning(outDir), async (error) =>
    isErrno(error) && !error.path ? await fileSystemError(error, LOCK_ROLE, lock) : error,
  );
}

const buildRunning = (outDir: string) => (holder: number, lock: string) =>
  `another build of ${outDir} is running (pid ${holder}, lock ${lock}); ${whatToDo(holder, lock)}`;

/**
 * What to do about a lock a live holder has, said after who holds it. This pid's: another thread's
 * here, or, where this process cannot tell (lock-holder.ts), one that ended holding it or a dead process's.
 */
const whatToDo = (holder: number, lock: string) =>
  `try again once it is done, or wait longer (${optionNamed('lockWait')}); ` +
  (holder === process.pid
    ? `pid ${holder} is this process: if none of its threads holds it (one ended holding it, or the lock is older than this process), delete ${lock}`
    : `if pid ${holder} is no cities-api process (the lock outlived its own), delete ${lock}`);

/**
 * Marks the site's lock as held in this thread while another thread of this process builds the
 * site, from before that thread takes the lock file until it has ended; LockBusyError when a
 * holder in this thread has it.
 */
export function claimSite(outDir: string): () => void {
  const { lock } = siteSiblings(outDir);
  if (claimed.has(lock)) throw new LockBusyError(buildRunning(outDir)(process.pid, lock), process.pid, lock);
  claimed.add(lock);
  return () => void claimed.delete(lock);
}

/** `task` run holding the lock of the dataset whose real file is `target` (waited for up to `wait` ms). */
export async function underDatasetLock<T>(target: string, wait: number, task: () => Promise<T>): Promise<T> {
  const release = await whileBusy(() => lockDataset(target), wait);
  try {
    return await task();
  } finally {
    await release();
  }
}

/**
 * `task` run holding `lock`, the lock of one short step on files beside a site (`what`: what its
 * holder does, as a busy lock's message says), waited for up to `wait` ms. A failure to write the
 * lock's draft is thrown as the file system's error, for the caller to say or to do without.
 */
export async function underStepLock<T>(lock: string, what: string, wait: number, task: () => Promise<T>): Promise<T> {
  const busy = (holder: number) =>
    `${holder === process.pid ? 'another holder in this process' : 'another process'} (pid ${holder}) holds ${lock} ` +
    `while it ${what}; ${whatToDo(holder, lock)}`;
  const release = await whileBusy(() => takeLock(lock, busy, async (error) => error), wait);
  try {
    return await task();
  } finally {
    await release();
  }
}

/** The lock writers of a dataset file hold while they choose ids and replace it (`.NAME.lock` beside it). */
export function lockDataset(file: string): Promise<Release> {
  const lock = join(dirname(file), `.${basename(file)}.lock`);
  // A POST's caller names no file, and a build's names its site: every failure (the draft not written: ENOSPC,
  // EACCES, EROFS...; the lock or its takeover file a directory or unreadable) is said as the dataset's.
  const named = (error: unknown) => fileSystemError(withPath(error, lock), DATASET_SIDE_ROLE, file);
  return takeLock(
    lock,
    (holder) =>
      `${holder === process.pid ? 'another holder in this process' : 'another process'} (pid ${holder}) holds the lock of ${file} (${lock}): ` +
      `a writable server adding cities, or a build folding them in; ${whatToDo(holder, lock)}`,
    named,
  ).catch(async (error: unknown) => {
    throw await named(error);
  });
}

/**
 * Runs `task` (which takes a lock), again and again while it finds the lock busy, for up to
 * `wait` ms; then its LockBusyError is thrown. With `lock`, each attempt first waits (cheaply,
 * reading the lock file) for that lock to be free, so a costly task is not run in vain. A lock
 * the task already waited for and gave up on (another whileBusy inside it) is not waited for again.
 * Looks again after 5 ms, then twice as long each time up to `maxDelay` ms; `signal` ends the wait.
 */
export async function whileBusy<T>(
  task: () => Promise<T>,
  wait: number,
  lock?: string,
  maxDelay = 100,
  signal?: AbortSignal,
): Promise<T> {
  const deadline = performance.now() + wait;
  // Aborted (Ctrl-C), the wait ends at once with the signal's reason: the caller says it.
  const pause = (ms: number) => sleep(ms, undefined, { signal });
  for (let delay = Math.min(5, maxDelay); ; delay = Math.min(delay * 2, maxDelay)) {
    signal?.throwIfAborted();
    if (lock && performance.now() + delay < deadline && (await isHeld(lock))) {
      await pause(delay);
      continue;
    }
    try {
      return await task();
    } catch (error) {
      if (!(error instanceof LockBusyError) || error.waited !== undefined) throw error;
      // Given up: said with how long it was waited for.
      if (performance.now() + delay > deadline)
        throw wait
          ? new LockBusyError(`${wordingOf(error)} (waited ${wait / 1000} s)`, error.holder, error.lock, wait)
          : error;
    }
    await pause(delay);
  }
}

/** Whether a live holder (another process, or a holder in this one) has the lock. */
async function isHeld(lock: string): Promise<boolean> {
  if (claimed.has(lock)) return true;
  // A lock that cannot be read (its directory a file, unreadable) is the task's to take and say, in its own words.
  const holder = await whoHolds(lock).catch(() => null);
  return holder !== null && isLiveHolder(holder);
}
