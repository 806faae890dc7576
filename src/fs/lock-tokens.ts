import { randomInt } from 'node:crypto';
import { existsSync, readlinkSync } from 'node:fs';
import { getEnvironmentData, setEnvironmentData, threadId } from 'node:worker_threads';
import { CitiesApiError } from '../core/errors.js';

// The threads of one process share its pid, so "this pid is alive" does not say whether a lock of
// this process is held or a draft of it in use. Who holds what is kept here, in memory all the
// process's threads share: a token per holder (a writer names its draft with it: dead-drafts.ts),
// and for a lock the lock file's identity (device and inode: the file holds the pid alone, as every
// version of cities-api reads it: lock-holder.ts). A token or file a holder here has not released,
// in a thread still running, names a live holder. Two files that exist at once never share an
// identity, so a dead process's lock with this pid (reused) is never taken for ours.

// (Named for its layout: two copies of cities-api in one process share only memory laid out alike.)
const KEY = 'cities-api:lock-holders:file-ids';
/** Locks held and drafts written at once in one process, at most (a build holds two locks; a writable server one per dataset). */
const SLOTS = 1024;
/**
 * Int32s: this process's tag, the last number given, then per slot its holder's number (0: free),
 * Node's id of its thread and the OS's, and its lock file's device and inode (high, low; high -1:
 * no file, above any inode a number holds).
 */
const HEAD = 2;
const WIDTH = 6;

/** A file's identity: no two files that exist at once share one. */
export interface FileId {
  readonly dev: number;
  readonly ino: number;
}

/**
 * The memory: made by the first thread of the process that loads this module, found by every
 * thread started after it (environment data is cloned into each new thread; a SharedArrayBuffer
 * clone is the same memory). Its tag is random: a dead process whose pid this one reuses had another.
 */
function shared(): Int32Array {
  const found = getEnvironmentData(KEY);
  if (found instanceof SharedArrayBuffer) return new Int32Array(found);
  const memory = new SharedArrayBuffer(4 * (HEAD + SLOTS * WIDTH));
  new Int32Array(memory)[0] = randomInt(1, 2 ** 31);
  setEnvironmentData(KEY, memory);
  return new Int32Array(memory);
}

const table = shared();
const tag = table[0]!.toString(36);
/** A file's identity as three int32s (a device number's low 32 bits: two devices alike there would only make a lock wait). */
const words = ({ dev, ino }: FileId) =>
  [(dev % 2 ** 32) | 0, Math.floor(ino / 2 ** 32) | 0, (ino % 2 ** 32) | 0] as const;
const NO_FILE = [0, -1, 0] as const;

/** This thread's id as the OS knows it (Linux: /proc/thread-self), 0 where it cannot be told. */
const osThread = (() => {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').at(-1)) || 0;
  } catch {
    return 0;
  }
})();

/** A new token, held by this thread until dropToken(); `file`: the lock file it holds. */
export function newToken(file?: FileId): string {
  // 1 to 2^31 - 1, whatever the count wraps to: 0 is a free slot.
  const n = ((Atomics.add(table, 1, 1) >>> 0) % (2 ** 31 - 1)) + 1;
  const [dev, high, low] = file ? words(file) : NO_FILE;
  for (let slot = HEAD; slot < table.length; slot += WIDTH) {
    // Taken as -1 while it is filled in: no reader matches a slot before its file is written.
    if (Atomics.compareExchange(table, slot, 0, -1) !== 0) continue;
    Atomics.store(table, slot + 1, threadId);
    Atomics.store(table, slot + 2, osThread);
    Atomics.store(table, slot + 3, dev);
    Atomics.store(table, slot + 4, high);
    Atomics.store(table, slot + 5, low);
    Atomics.store(table, slot, n);
    return `${tag}.${n}`;
  }
  throw new CitiesApiError(`cannot take a lock or write a draft: this process has ${SLOTS} under way already`);
}

/** The number in a token this process gave, else 0. */
function numberOf(token: string | undefined): number {
  const [of, number] = token?.split('.') ?? [];
  const n = Number(number);
  return of === tag && Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/** The slot holding `n` (above 0), or -1. */
function slotOf(n: number): number {
  if (n > 0) for (let slot = HEAD; slot < table.length; slot += WIDTH) if (Atomics.load(table, slot) === n) return slot;
  return -1;
}

/** Frees the slot if it still holds `n`; its thread is no thread's first, so forgetThread never frees the next holder's. */
function free(slot: number, n: number): void {
  if (Atomics.load(table, slot) !== n) return;
  Atomics.store(table, slot + 1, -1);
  Atomics.compareExchange(table, slot, n, 0);
}

/** The token released: it names no holder any more. */
export function dropToken(token: string): void {
  const n = numberOf(token);
  const slot = slotOf(n);
  if (slot >= 0) free(slot, n);
}

/** Whether the holder in `slot` (holding `n`) is in a thread still running; else its slot is freed. */
function running(slot: number, n: number): boolean {
  const os = Atomics.load(table, slot + 2);
  if (os === 0 || existsSync(`/proc/self/task/${os}`)) return true;
  free(slot, n);
  return false;
}

/**
 * Whether `token` names a holder in this process that has not released it, in a thread still
 * running (where the OS says so: Linux; elsewhere a thread that died holding it is forgotten by
 * forgetThread). A token of another process, or none (a name written by an older version), is no such holder.
 */
export function heldHere(token: string | undefined): boolean {
  const n = numberOf(token);
  const slot = slotOf(n);
  return slot >= 0 && running(slot, n);
}

/**
 * Whether a holder in this process (but the one of `except`, a token) holds the lock file `file` and
 * has not released it, in a thread still running. A file no holder here took (a lock written by
 * hand, or by a dead process whose pid this one reuses) is held by no one.
 */
export function holdsFile(file: FileId, except?: string): boolean {
  const [dev, high, low] = words(file);
  const own = numberOf(except);
  for (let slot = HEAD; slot < table.length; slot += WIDTH) {
    const n = Atomics.load(table, slot);
    if (n <= 0 || n === own || Atomics.load(table, slot + 3) !== dev || Atomics.load(table, slot + 4) !== high)
      continue;
    if (Atomics.load(table, slot + 5) === low && running(slot, n)) return true;
  }
  return false;
}

/** The tokens a thread of this process held when it ended (Node's thread id), forgotten: their locks are a dead holder's. */
export function forgetThread(id: number): void {
  for (let slot = HEAD; slot < table.length; slot += WIDTH)
    if (Atomics.load(table, slot + 1) === id) free(slot, Atomics.load(table, slot));
}
