import { closeSync, linkSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { CitiesApiError } from '../core/errors.js';
import { type Holder, isLiveHolder, whoHoldsNow } from './lock-holder.js';
import { dropToken, type FileId, fileState, forgetFile, newToken } from './lock-tokens.js';

// One lock file taken and released (lock.ts says which locks there are, and waits for them).

/** Locks this thread holds or is taking, so two holders in one thread exclude each other too. */
export const claimed = new Set<string>();

/** What this thread's drafts are named with: the pid, and a thread's id but the main thread's (threads of a process share its pid). */
const OWN = threadId ? `${process.pid}.${threadId}` : `${process.pid}`;

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
 * A lock file holding its holder's pid (lock-holder.ts; a holder in this process is known by the
 * file's identity: lock-tokens.ts, or where it is not, told from a dead process's by its mtime:
 * process-start.ts). It appears with the pid already in it (a draft file hard-linked into place,
 * the same file), never written again, so it is never seen empty; a dead holder's lock is
 * replaced (one rename, so it never disappears) by one taker at a time, the one holding `LOCK.takeover`.
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
  const draft = `${lock}-${OWN}`;
  const takeover = `${lock}.takeover`;
  let token = '';
  let file: Written;
  const release = async () => {
    // Its own lock only. One deleted by hand and taken by another holder meanwhile is another file,
    // or, its inode reused (ext4 hands a freed one straight back), another process's pid, another
    // holder's here, whose table slot holds that file too, or one's here with a table of its own,
    // made at another time (wrote()).
    const now = whoHoldsNow(lock);
    if (now?.pid === process.pid && wrote(now, file) && fileState(file, token) !== 'live')
      rmSync(lock, { force: true });
    dropToken(token);
    claimed.delete(lock);
  };
  try {
    rmSync(draft, { force: true });
    try {
      file = writeDraft(draft);
    } catch (error) {
      throw await named(error);
    }
    // Held before it is linked into place: a holder here reading the lock (or the takeover file) finds it live.
    token = newToken(file);
    for (let attempt = 0; attempt < 5; attempt++) {
      if (linked(draft, lock)) return release;
      const holder = whoHoldsNow(lock);
      if (holder === null) continue;
      if (isLiveHolder(holder)) throw busy(holder.pid);
      if (!linked(draft, takeover)) {
        const taker = whoHoldsNow(takeover);
        if (taker !== null && isLiveHolder(taker)) throw busy(taker.pid);
        if (taker !== null) removeStale(takeover);
        continue;
      }
      try {
        const still = whoHoldsNow(lock);
        if (still === null) continue;
        if (isLiveHolder(still)) throw busy(still.pid);
        renameSync(draft, lock);
        forgetFile(still.file);
        return release;
      } finally {
        rmSync(takeover, { force: true });
      }
    }
    throw new CitiesApiError(`cannot take the lock ${lock}`);
  } catch (error) {
    dropToken(token);
    claimed.delete(lock);
    throw error;
  } finally {
    rmSync(draft, { force: true });
  }
}

/** A lock file's identity, and when it was made and written (lock-holder.ts's Holder). */
type Written = FileId & { readonly mtimeMs: number; readonly birthtimeMs: number };

/** The draft of a lock: a new file holding this pid, its identity and times (read once closed: some servers stamp it then). */
function writeDraft(draft: string): Written {
  const fd = openSync(draft, 'wx');
  try {
    writeSync(fd, `${process.pid}\n`);
  } finally {
    closeSync(fd);
  }
  const { dev, ino, mtimeMs, birthtimeMs } = statSync(draft);
  return { dev, ino, mtimeMs, birthtimeMs };
}

/**
 * Whether the lock file read is the one written: its identity, and its birth time where the file
 * system keeps one (nothing changes it) or else its mtime (never written again). Not the mtime
 * alone: a lock touched by hand while held was then never removed, and looked live to this
 * process for good. (Where Node cannot ask the OS for a birth time it gives the ctime, which a
 * link moves: the mtime decides.)
 */
const wrote = (now: Holder, file: Written) =>
  now.file.dev === file.dev &&
  now.file.ino === file.ino &&
  ((file.birthtimeMs !== 0 && now.birthtimeMs === file.birthtimeMs) || now.mtimeMs === file.mtimeMs);

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
  const aside = `${file}-${OWN}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const taker = whoHoldsNow(aside);
  if (taker !== null && isLiveHolder(taker)) linked(aside, file);
  else if (taker !== null) forgetFile(taker.file);
  rmSync(aside, { force: true });
}
