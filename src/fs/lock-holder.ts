import { closeSync, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { withPath } from './fs-error.js';
import { type FileId, fileState, type Known, tokenState } from './lock-tokens.js';
import { writtenBeforeStart } from './process-start.js';

// Who holds a lock file: the pid written in it (nothing else, as every version of cities-api reads
// it), the file's identity and mtime (a holder in this process is told by them: lock-tokens.ts,
// process-start.ts), and whether that holder is alive. (lock.ts takes and releases the locks; a
// build's leftovers and a served site's writer are told apart by their pids too.)

/** A lock's holder: its process (0 when unreadable), and the lock file it wrote (its device and inode, and when). */
export interface Holder {
  readonly pid: number;
  readonly file: FileId;
  readonly mtimeMs: number;
  /** When the file was made, where the file system says (0 where not; where the OS cannot be asked, Node gives its ctime). */
  readonly birthtimeMs?: number;
}

/** The pid in a lock file (0 when unreadable), or null when there is no such file. */
export async function readHolder(file: string): Promise<number | null> {
  return (await whoHolds(file))?.pid ?? null;
}

/** The holder of a lock file, or null when there is no such file. */
export async function whoHolds(file: string): Promise<Holder | null> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    return noFile(error);
  }
  // Read through one descriptor: the pid and the identity of one file, however it is replaced meanwhile.
  try {
    return holderIn(await handle.readFile('utf8'), await handle.stat());
  } catch (error) {
    throw withPath(error, file); // a directory's EISDIR names no path
  } finally {
    await handle.close();
  }
}

/** whoHolds(), synchronously (takeLock's steps). */
export function whoHoldsNow(file: string): Holder | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    return noFile(error);
  }
  try {
    return holderIn(readFileSync(fd, 'utf8'), fstatSync(fd));
  } catch (error) {
    throw withPath(error, file);
  } finally {
    closeSync(fd);
  }
}

/** The pid a lock file names: its first line, as older versions wrote it (and read all of it). */
function holderIn(text: string, { dev, ino, mtimeMs, birthtimeMs }: Stats): Holder {
  return { pid: Number(text.split('\n')[0]!.trim()) || 0, file: { dev, ino }, mtimeMs, birthtimeMs };
}

function noFile(error: unknown): null {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  throw error;
}

/**
 * A live holder other than the caller: another live process, or a holder in this process (another
 * thread's, which has the same pid) that has not released it. A lock of this pid whose holder here
 * ended holding it is a dead holder's; one no holder here knows of is a dead process's (its pid
 * reused) if written before this process started, else a holder's here of another table: live.
 */
export const isLiveHolder = (holder: Holder) => liveBy(holder.pid, () => fileState(holder.file), holder);

/**
 * Whether the writer a file names by its pid and token (newToken: a draft's name, a preview's
 * marker) is alive. Another pid's: a live process has it. This pid's: its token is one this
 * process's table gave and a holder still has (a thread of this process: they share the pid); one
 * the table does not know (another table's, or none: a file an older version wrote) was written by
 * a dead process whose pid this one reuses if written before this process started, else by a holder here.
 */
export const isLiveWriter = ({ pid, token }: { pid: number; token?: string }, file: { mtimeMs: number }) =>
  liveBy(pid, () => tokenState(token), file);

/** The one rule of both: another pid's by the OS; this pid's by the table (`known`), else by when `file` was written. */
function liveBy(pid: number, known: () => Known, file: { mtimeMs: number }): boolean {
  if (pid !== process.pid) return isAlive(pid);
  const state = known();
  return state === 'unknown' ? !writtenBeforeStart(file) : state === 'live';
}

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
