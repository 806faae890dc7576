import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

// Who holds a lock file: the pid written in it, and whether that process is alive. (lock.ts
// takes and releases the locks; a build's leftovers and a served site's writer are told apart by
// their pids too.)

/** The pid in a lock file (0 when unreadable), or null when there is no such file. */
export async function readHolder(file: string): Promise<number | null> {
  try {
    return pidIn(await readFile(file, 'utf8'));
  } catch (error) {
    return noFile(error);
  }
}

/** readHolder(), synchronously (takeLock's steps). */
export function holderNow(file: string): number | null {
  try {
    return pidIn(readFileSync(file, 'utf8'));
  } catch (error) {
    return noFile(error);
  }
}

const pidIn = (text: string): number => Number(text.trim()) || 0;

function noFile(error: unknown): null {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  throw error;
}

/** A live process other than this one (a lock holding this pid is a dead process's whose pid was reused). */
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
