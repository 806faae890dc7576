import { randomInt } from 'node:crypto';
import { existsSync, readlinkSync } from 'node:fs';
import { getEnvironmentData, setEnvironmentData, threadId } from 'node:worker_threads';
import { CitiesApiError } from '../core/errors.js';

// Every holder of a lock writes a token of its own beside its pid (lock-holder.ts): the threads of
// one process share its pid, so "this pid is alive" does not say whether a lock is held. Who holds
// a token is kept here, in memory all the process's threads share: a token this process gave,
// whose holder has not released it, in a thread still running, names a live holder.

const KEY = 'cities-api:lock-holders';
/** Locks held at once in one process, at most (a build holds two; a writable server one per dataset). */
const SLOTS = 1024;
/** Int32s: this process's tag, the last number given, then per slot its holder's number (0: free), Node's id of its thread and the OS's. */
const HEAD = 2;
const WIDTH = 3;

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

/** This thread's id as the OS knows it (Linux: /proc/thread-self), 0 where it cannot be told. */
const osThread = (() => {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').at(-1)) || 0;
  } catch {
    return 0;
  }
})();

/** A new token, held by this thread until dropToken(). */
export function newToken(): string {
  // 1 to 2^31 - 1, whatever the count wraps to: 0 is a free slot.
  const n = ((Atomics.add(table, 1, 1) >>> 0) % (2 ** 31 - 1)) + 1;
  for (let slot = HEAD; slot < table.length; slot += WIDTH) {
    if (Atomics.compareExchange(table, slot, 0, n) !== 0) continue;
    Atomics.store(table, slot + 1, threadId);
    Atomics.store(table, slot + 2, osThread);
    return `${tag}.${n}`;
  }
  throw new CitiesApiError(`cannot take a lock: this process holds ${SLOTS} already`);
}

/** The number in a token this process gave, else 0. */
function numberOf(token: string | undefined): number {
  const [of, number] = token?.split('.') ?? [];
  const n = Number(number);
  return of === tag && Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/** The slot holding `n` (not 0), or -1. */
function slotOf(n: number): number {
  if (n) for (let slot = HEAD; slot < table.length; slot += WIDTH) if (Atomics.load(table, slot) === n) return slot;
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

/**
 * Whether `token` names a holder in this process that has not released it, in a thread still
 * running (where the OS says so: Linux; elsewhere a thread that died holding it is forgotten by
 * forgetThread). A token of another process, or none (a lock written by hand), is no such holder.
 */
export function heldHere(token: string | undefined): boolean {
  const n = numberOf(token);
  const slot = slotOf(n);
  if (slot < 0) return false;
  const os = Atomics.load(table, slot + 2);
  if (os === 0 || existsSync(`/proc/self/task/${os}`)) return true;
  free(slot, n);
  return false;
}

/** The tokens a thread of this process held when it ended (Node's thread id), forgotten: their locks are a dead holder's. */
export function forgetThread(id: number): void {
  for (let slot = HEAD; slot < table.length; slot += WIDTH)
    if (Atomics.load(table, slot + 1) === id) free(slot, Atomics.load(table, slot));
}
