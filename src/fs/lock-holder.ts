import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { heldHere } from './lock-tokens.js';

// Who holds a lock file: the pid written in it, the holder's token on the next line (lock-tokens.ts),
// and whether that holder is alive. (lock.ts takes and releases the locks; a build's leftovers and
// a served site's writer are told apart by their pids too.)

/** A lock's holder: its process (0 when unreadable) and its token (none in a lock written by hand or by an older version). */
export interface Holder {
  readonly pid: number;
  readonly token: string | undefined;
}

/** The pid in a lock file (0 when unreadable), or null when there is no such file. */
export async function readHolder(file: string): Promise<number | null> {
  return (await whoHolds(file))?.pid ?? null;
}

/** The holder of a lock file, or null when there is no such file. */
export async function whoHolds(file: string): Promise<Holder | null> {
  try {
    return holderIn(await readFile(file, 'utf8'));
  } catch (error) {
    return noFile(error);
  }
}

/** whoHolds(), synchronously (takeLock's steps). */
export function whoHoldsNow(file: string): Holder | null {
  try {
    return holderIn(readFileSync(file, 'utf8'));
  } catch (error) {
    return noFile(error);
  }
}

function holderIn(text: string): Holder {
  const [pid = '', token] = text.split('\n');
  return { pid: Number(pid.trim()) || 0, token: token?.trim() || undefined };
}

function noFile(error: unknown): null {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  throw error;
}

/**
 * A live holder other than the caller: another live process, or a holder in this process (another
 * thread's, which has the same pid) that has not released it. A lock holding this pid without such
 * a holder's token is a dead holder's: a thread that ended, or a dead process whose pid was reused.
 */
export const isLiveHolder = (holder: Holder) =>
  holder.pid === process.pid ? heldHere(holder.token) : isAlive(holder.pid);

/** A live process other than this one: the writer of a draft or tree named with its pid (a lock's holder is told by isLiveHolder). */
export const isOther = (pid: number) => pid !== process.pid && isAlive(pid);

/** Whether a process of this pid is alive (ours or another user's). */
export function isAlive(pid: number): boolean {
  // 0 and negative numbers name process groups, not a builder (an unreadable lock holds 0).
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !isThread(pid);
}

/**
 * Whether `pid` names a thread, not a process (Linux: a thread's id answers kill(id, 0) too, so a
 * lock whose dead holder's pid became a thread's would look held for good). Its Tgid, the id of
 * the process it belongs to, is then another number.
 */
function isThread(pid: number): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return false; // not Linux, or gone meanwhile
  }
  const tgid = /^Tgid:\s*(\d+)/m.exec(status);
  return tgid !== null && Number(tgid[1]) !== pid;
}
