import { linkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CitiesApiError, wordingOf } from '../core/errors.js';
import { fileSystemError, isErrno, type PathRole } from './fs-error.js';
import { holderNow, isOther, readHolder } from './lock-holder.js';

const LOCK_ROLE: PathRole = { what: 'lock file' };

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
    prefix: `.${name}.`,
    parent,
  };
}

/** Locks this process holds or is taking, so two holders in one process exclude each other too. */
const claimed = new Set<string>();

export type Release = () => Promise<void>;

/** The lock is held by another live process (or another holder in this one): wait, or give up. */
export class LockBusyError extends CitiesApiError {
  constructor(
    message: string,
    readonly holder: number,
    readonly lock: string,
    /** How long it was waited for (ms) before giving up, when it was (whileBusy). */
    readonly waited?: number,
  ) {
    super(message);
  }
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

/** What to do about a lock a live holder has, said after who holds it. */
const whatToDo = (holder: number, lock: string) =>
  `try again once it is done, or wait longer (--lock-wait SECONDS); if pid ${holder} is no cities-api process (the lock outlived its own), delete ${lock}`;

/**
 * Marks the site's lock as held in this thread while another thread of this process builds the
 * site (the lock file then holds this process's pid, which alone would not exclude a holder in
 * this thread); LockBusyError when a holder in this thread has it.
 */
export function claimSite(outDir: string): () => void {
  const { lock } = siteSiblings(outDir);
  if (claimed.has(lock)) throw new LockBusyError(buildRunning(outDir)(process.pid, lock), process.pid, lock);
  claimed.add(lock);
  return () => void claimed.delete(lock);
}

/** The lock writers of a dataset file hold while they choose ids and replace it (`.NAME.lock` beside it). */
export function lockDataset(file: string): Promise<Release> {
  const lock = join(dirname(file), `.${basename(file)}.lock`);
  // A POST's caller names no file: every failure to write the draft (ENOSPC, EACCES, EROFS...) is said with the lock's path.
  return takeLock(
    lock,
    (holder) =>
      `another process (pid ${holder}) holds the lock of ${file} (${lock}): a writable server adding cities, or a build folding them in; ${whatToDo(holder, lock)}`,
    (error) => fileSystemError(error, LOCK_ROLE, lock),
  );
}

/**
 * Runs `task` (which takes a lock), again and again while it finds the lock busy, for up to
 * `wait` ms; then its LockBusyError is thrown. With `lock`, each attempt first waits (cheaply,
 * reading the lock file) for that lock to be free, so a costly task is not run in vain. A lock
 * the task already waited for and gave up on (another whileBusy inside it) is not waited for again.
 */
export async function whileBusy<T>(task: () => Promise<T>, wait: number, lock?: string): Promise<T> {
  const deadline = performance.now() + wait;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
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
  const holder = await readHolder(lock);
  return holder !== null && isOther(holder);
}

/**
 * A lock file holding its holder's pid. It appears with the pid already in it (a draft file
 * hard-linked into place), so it is never seen empty; a dead holder's lock is replaced (one
 * rename, so it never disappears) by one taker at a time, the one holding `LOCK.takeover`.
 * Its steps are synchronous: a few metadata calls (tens of microseconds, no fsync), which queued
 * behind a build's writes in libuv's thread pool took milliseconds each (a POST takes this lock).
 * `named` says what a failure to write the draft is thrown as.
 */
async function takeLock(
  lock: string,
  describe: (holder: number, lock: string) => string,
  named: (error: unknown) => Promise<unknown>,
): Promise<Release> {
  const busy = (holder: number) => new LockBusyError(describe(holder, lock), holder, lock);
  if (claimed.has(lock)) throw busy(process.pid);
  claimed.add(lock);
  const draft = `${lock}-${process.pid}`;
  const takeover = `${lock}.takeover`;
  const release = async () => {
    rmSync(lock, { force: true });
    claimed.delete(lock);
  };
  try {
    rmSync(draft, { force: true });
    try {
      writeFileSync(draft, `${process.pid}\n`, { flag: 'wx' });
    } catch (error) {
      throw await named(error);
    }
    for (let attempt = 0; attempt < 5; attempt++) {
      if (linked(draft, lock)) return release;
      const holder = holderNow(lock);
      if (holder === null) continue;
      if (isOther(holder)) throw busy(holder);
      if (!linked(draft, takeover)) {
        const taker = holderNow(takeover);
        if (taker !== null && isOther(taker)) throw busy(taker);
        if (taker !== null) removeStale(takeover);
        continue;
      }
      try {
        const still = holderNow(lock);
        if (still === null) continue;
        if (isOther(still)) throw busy(still);
        renameSync(draft, lock);
        return release;
      } finally {
        rmSync(takeover, { force: true });
      }
    }
    throw new CitiesApiError(`cannot take the lock ${lock}`);
  } catch (error) {
    claimed.delete(lock);
    throw error;
  } finally {
    rmSync(draft, { force: true });
  }
}

/** Creates `to` as a hard link of `from`; false when `to` exists. */
function linked(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Deletes a dead taker's takeover file, unless a live one replaced it meanwhile (then it is put back). */
function removeStale(file: string): void {
  const aside = `${file}-${process.pid}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const taker = holderNow(aside);
  if (taker !== null && isOther(taker)) linked(aside, file);
  rmSync(aside, { force: true });
}
