import { linkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { CitiesApiError } from '../core/errors.js';
import { holderNow, isOther } from './lock-holder.js';

// One lock file taken and released (lock.ts says which locks there are, and waits for them).

/** Locks this process holds or is taking, so two holders in one process exclude each other too. */
export const claimed = new Set<string>();

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
 * A lock file holding its holder's pid. It appears with the pid already in it (a draft file
 * hard-linked into place), so it is never seen empty; a dead holder's lock is replaced (one
 * rename, so it never disappears) by one taker at a time, the one holding `LOCK.takeover`.
 * Its steps are synchronous: a few metadata calls (tens of microseconds, no fsync), which queued
 * behind a build's writes in libuv's thread pool took milliseconds each (a POST takes this lock).
 * `named` says what a failure to write the draft is thrown as.
 */
export async function takeLock(
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
