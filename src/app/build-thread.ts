import { getHeapStatistics } from 'node:v8';
import type { Worker } from 'node:worker_threads';
import { CitiesApiError, type Problem, wordingOf } from '../core/errors.js';
import type { Silent } from '../proc/channel.js';
import { claimSite, LockBusyError } from '../fs/lock.js';
import { forgetThread } from '../fs/lock-tokens.js';
import { DatasetMoved } from '../dataset/log-fold.js';
import { startThread, WorkerEnded } from '../proc/workers.js';
import { resolveSiteDir } from '../store/site-path.js';
import { tidySite } from '../store/site-recovery.js';

// A build in a thread of its own, for large datasets: a thread's young generation can be capped
// (the main thread's is set at process start and grows to tens of MB while a build allocates),
// and a thread's heap is freed whole when it ends. The caller sees the same build(): its
// callbacks called, its signal heard, its errors of the same class, message and fields.

// A small young generation, as for the writer threads: the build's objects that live are few
// and large (the dataset, the orderings); the many short-lived ones wait in a large one for no
// gain. The old generation is capped for how often it is collected, not for room: V8 lets a heap
// whose limit is 2 GB or more grow 4-fold between full collections, one of 1.5 GB about 1.8-fold.
// Ranking a name field leaves its 140,000 strings as garbage: 196 instead of 223 MB peak RSS at
// 140,000 cities. Room enough: a build holds about 100 bytes of heap per page (its file list).
const LIMITS = {
  maxYoungGenerationSizeMb: 4,
  maxOldGenerationSizeMb: Math.min(1536, Math.floor(getHeapStatistics().heap_size_limit / 2 ** 20)),
};

/** What of build()'s options this module handles (build.ts's BuildOptions; not imported: build.ts imports this). */
export interface ThreadedOptions<Plan> {
  readonly out: string;
  /** The caller holds the site's lock already (the thread does not take it either). */
  readonly siteLocked?: boolean | undefined;
  readonly background?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly onRead?: (bytesRead: number, bytes: number) => void;
  readonly onStart?: (plan: Plan) => void;
  readonly onProgress?: (pagesDone: number, pages: number) => void;
  readonly onWarning?: ((warning: Problem) => void) | undefined;
}

export interface BuildThreadData {
  /** The options but the signal and the callbacks. */
  readonly options: { readonly out: string; readonly cwd?: string; readonly background?: boolean | undefined };
  /** The callbacks the caller gave (the thread sends only their events). */
  readonly callbacks: {
    readonly onRead: boolean;
    readonly onStart: boolean;
    readonly onProgress: boolean;
    readonly onWarning: boolean;
  };
}

/** buildInThread() and its thread: one call, the build; the callbacks as events. */
export interface BuildProtocol<Plan = unknown, Result = unknown> {
  readonly parent: Silent;
  readonly worker: {
    readonly calls: { build(data: BuildThreadData): Result };
    readonly events: { read: Step; progress: Step; start: Plan; warning: Problem };
  };
}
type Step = readonly [done: number, total: number];

/** For the tests: a thread's limits, and the thread itself once started (to stop it). */
export interface ThreadHooks {
  readonly resourceLimits?: { maxYoungGenerationSizeMb?: number; maxOldGenerationSizeMb?: number };
  readonly onThread?: (worker: Worker) => void;
}

/**
 * build() in a thread. The site's lock is marked taken in this thread too while it runs (each
 * thread knows only its own holders), so builds of one site in one process still exclude each
 * other. A thread that dies (killed, out of memory) is a CitiesApiError; what it left beside the
 * site (its draft tree, the lock) is removed at once, the site is as it was.
 */
export async function buildInThread<Plan, Result>(
  options: ThreadedOptions<Plan>,
  hooks: ThreadHooks = {},
): Promise<Result> {
  const { signal, onRead, onStart, onProgress, onWarning, ...plain } = options;
  signal?.throwIfAborted();
  const out = await resolveSiteDir(options.out).catch(() => null);
  const release = out && !options.siteLocked ? claimSite(out) : null;
  const data: BuildThreadData = {
    options: { cwd: process.cwd(), ...plain },
    callbacks: { onRead: !!onRead, onStart: !!onStart, onProgress: !!onProgress, onWarning: !!onWarning },
  };
  const thread = startThread<BuildProtocol<Plan, Result>>('app/build-worker', {
    name: `the build of ${options.out}`,
    resourceLimits: hooks.resourceLimits ?? LIMITS,
    errors: [LockBusyError, DatasetMoved],
  });
  const worker = thread.worker.thread!;
  // Read now: once the thread has ended, it reads -1.
  const { threadId } = worker;
  hooks.onThread?.(worker);
  // The caller's signal, or a callback that threw: the thread hears it as a signal.
  const stop = new AbortController();
  const abort = () => stop.abort();
  signal?.addEventListener('abort', abort, { once: true });
  let callbackError: { error: unknown } | undefined;
  const call = (callback: () => void) => {
    if (callbackError) return;
    try {
      callback();
    } catch (error) {
      callbackError = { error };
      abort();
    }
  };
  thread.on('read', ([done, total]) => call(() => onRead?.(done, total)));
  thread.on('progress', ([done, total]) => call(() => onProgress?.(done, total)));
  thread.on('start', (plan) => call(() => onStart?.(plan)));
  thread.on('warning', (warning) => call(() => onWarning?.(warning)));
  const ended = await thread.call('build', data, stop.signal).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  await thread.stop();
  signal?.removeEventListener('abort', abort);
  release?.();
  if (callbackError) throw callbackError.error;
  if ('result' in ended) return ended.result;
  if (!(ended.error instanceof WorkerEnded)) throw ended.error;
  // The locks it held are marked a dead holder's, so they are taken over (where the OS cannot tell that its thread ended).
  forgetThread(threadId);
  // Its draft tree and lock are this process's: the next build would remove them, but now is better.
  if (out) await tidySite(out, options.siteLocked).catch(() => undefined);
  throw new CitiesApiError(
    `${wordingOf(ended.error)}; nothing half-written was left (the site is as it was, or whole if it was already in place): build again`,
  );
}
