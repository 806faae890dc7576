import { randomInt } from 'node:crypto';
import { existsSync, readlinkSync } from 'node:fs';
import { getEnvironmentData, setEnvironmentData, threadId } from 'node:worker_threads';
import { CitiesApiError } from '../core/errors.js';

// The threads of one process share its pid, so "this pid is alive" does not say whether a lock of
// this process is held or a draft of it in use. Who holds what is kept here, in memory threads of
// the process share: a token per holder (a writer names its draft with it: dead-drafts.ts), and
// for a lock the lock file's identity (device and inode: the file holds the pid alone, as every
// version of cities-api reads it: lock-holder.ts). A holder is live while it has not released it
// and its thread runs; dead once its thread ended holding it (kept, known as dead, until its lock
// is taken over). A file of this pid this table does not know is no proof of a dead holder: a
// thread started by one that had not loaded this module has a table of its own (shared()). Who
// wrote it is then told by its mtime (process-start.ts).

// (Named for its layout: two copies of cities-api in one process share only memory laid out alike.)
const KEY = 'cities-api:lock-holders:file-ids';
/** Locks held and drafts written at once in one table, at most (a build holds two locks; a writable server one per dataset). */
const SLOTS = 1024;
/**
 * Int32s: this process's tag, the last number given, then per slot its state (0: free; -1: being
 * filled; n > 0: held by holder n; ~n, below -1: holder n's thread ended holding it), Node's id of
 * its thread and the OS's, and its lock file's device and inode (high, low; high -1: no file, above
 * any inode a number holds). A slot's other words change only while its state is -1, and a state
 * never comes back (numbers are not given twice), so words read between two equal reads of it are its holder's.
 */
const HEAD = 2;
const WIDTH = 6;

/** A file's identity: no two files that exist at once share one. */
export interface FileId {
  readonly dev: number;
  readonly ino: number;
}

/** What this process's table says of a holder: holding it, ended holding it, or not one it knows. */
export type Known = 'live' | 'dead' | 'unknown';

/**
 * The memory: made by a thread that loads this module and finds none, found by every thread it
 * starts after (environment data is cloned into each new thread, and so on down; a
 * SharedArrayBuffer clone is the same memory). A thread started by one that had none (a library
 * user's main thread that never loads cities-api) makes its own: one process can have several.
 * Its tag is random: a dead process whose pid this one reuses had another, and so has another table here.
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
  const slot = freeSlot();
  Atomics.store(table, slot + 1, threadId);
  Atomics.store(table, slot + 2, osThread);
  Atomics.store(table, slot + 3, dev);
  Atomics.store(table, slot + 4, high);
  Atomics.store(table, slot + 5, low);
  Atomics.store(table, slot, n);
  return `${tag}.${n}`;
}

/**
 * A slot taken (its state -1 while it is filled in: no reader matches it before): a free one, else
 * a dead holder's, a draft's first (its draft, unknown then, is still taken for a dead writer's
 * by its tag: tokenState), a lock's last (unknown then, its lock looks live: process-start.ts).
 */
function freeSlot(): number {
  for (const wanted of ['free', 'draft', 'lock'] as const)
    for (let slot = HEAD; slot < table.length; slot += WIDTH) {
      const state = wanted === 'free' ? 0 : Atomics.load(table, slot);
      // A dead holder's words stay until its slot is taken: a draft's has no file (high word -1).
      const fits = state === 0 || (state < -1 && (Atomics.load(table, slot + 4) === -1) === (wanted === 'draft'));
      if (fits && Atomics.compareExchange(table, slot, state, -1) === state) return slot;
    }
  throw new CitiesApiError(`cannot take a lock or write a draft: this process has ${SLOTS} under way already`);
}

/** The number in a token this process's table gave, else 0. */
function numberOf(token: string | undefined): number {
  const [of, number] = token?.split('.') ?? [];
  const n = Number(number);
  return of === tag && Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/** The slot of holder `n` (above 0), live or dead, or -1. */
function slotOf(n: number): number {
  for (let slot = HEAD; n > 0 && slot < table.length; slot += WIDTH) {
    const state = Atomics.load(table, slot);
    if (state === n || state === ~n) return slot;
  }
  return -1;
}

/** The token released: it names no holder any more (its slot freed in one step, whatever its state). */
export function dropToken(token: string): void {
  const n = numberOf(token);
  const slot = slotOf(n);
  if (slot >= 0 && Atomics.compareExchange(table, slot, n, 0) !== n) Atomics.compareExchange(table, slot, ~n, 0);
}

/** Whether live holder `n` (in `slot`, its OS thread `os`) is in a thread still running; else it is marked dead. */
function running(slot: number, n: number, os: number): boolean {
  if (os === 0 || existsSync(`/proc/self/task/${os}`)) return true;
  Atomics.compareExchange(table, slot, n, ~n);
  return false;
}

/**
 * What this table says of the holder of `token`: live (not released, in a thread still running,
 * where the OS says so: Linux; elsewhere until forgetThread), dead, or unknown: a token of another
 * table (another process's, or this one's: see shared()), or none (a name an older version gave).
 * A token of this table that it no longer holds was released: dead.
 */
export function tokenState(token: string | undefined): Known {
  const n = numberOf(token);
  if (n === 0) return 'unknown';
  const slot = slotOf(n);
  const live = slot >= 0 && Atomics.load(table, slot) === n && running(slot, n, Atomics.load(table, slot + 2));
  return live ? 'live' : 'dead';
}

/**
 * What this table says of the holders of the lock file `file` (but the one of `except`, a token):
 * live if one has it, in a thread still running; else dead if one ended holding it; else unknown
 * (a lock written by hand, by a dead process whose pid this one reuses, or by a holder here of another table).
 */
export function fileState(file: FileId, except?: string): Known {
  const [dev, high, low] = words(file);
  const own = numberOf(except);
  let known: Known = 'unknown';
  for (let slot = HEAD; slot < table.length; slot += WIDTH) {
    const holder = holderIn(slot);
    if (!holder || holder.n === own || holder.dev !== dev || holder.high !== high || holder.low !== low) continue;
    if (holder.state === holder.n && running(slot, holder.n, holder.os)) return 'live';
    known = 'dead';
  }
  return known;
}

/** The holder in `slot` (its state, number, OS thread and file), read whole; null when free or being filled. */
function holderIn(slot: number) {
  for (;;) {
    const state = Atomics.load(table, slot);
    if (state === 0 || state === -1) return null;
    const [os, dev, high, low] = [2, 3, 4, 5].map((word) => Atomics.load(table, slot + word)) as [number, ...number[]];
    if (Atomics.load(table, slot) === state) return { state, n: state > 0 ? state : ~state, os, dev, high, low };
  }
}

/** The dead holders of the lock file `file` forgotten: it was taken over or removed (its inode may now be another file's). */
export function forgetFile(file: FileId): void {
  const [dev, high, low] = words(file);
  for (let slot = HEAD; slot < table.length; slot += WIDTH) {
    const holder = holderIn(slot);
    if (holder && holder.state < 0 && holder.dev === dev && holder.high === high && holder.low === low)
      Atomics.compareExchange(table, slot, holder.state, 0);
  }
}

/**
 * The holders a thread of this process had when it ended (Node's thread id), marked dead: their
 * locks are taken over, their drafts removed (where the OS cannot tell that a thread ended).
 * Kept, not freed: a lock this table does not know looks live (process-start.ts).
 */
export function forgetThread(id: number): void {
  for (let slot = HEAD; slot < table.length; slot += WIDTH) {
    const state = Atomics.load(table, slot);
    // The state read before the thread: a thread read while the state is unchanged is that holder's.
    if (state > 0 && Atomics.load(table, slot + 1) === id) Atomics.compareExchange(table, slot, state, ~state);
  }
}
