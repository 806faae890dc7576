import { getHeapStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { CitiesApiError, type Problem } from '../core/errors.js';
import { claimSite } from '../fs/lock.js';
import { resolveSiteDir } from '../store/site-path.js';
import { tidySite } from '../store/site-writer.js';
import { rebuiltError, type ErrorData } from './thread-error.js';

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
// A thread takes none of this process's flags but --cpu-prof's, so a profiled build profiles it too.
const PROFILING = process.execArgv.filter((flag) => flag.startsWith('--cpu-prof'));
// Under the tests the sources run as TypeScript; the thread always runs the compiled script.
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? '../../lib/app/build-worker.js' : './build-worker.js',
  import.meta.url,
);

/** What of build()'s options this module handles (build.ts's BuildOptions; not imported: build.ts imports this). */
export interface ThreadedOptions<Plan> {
  readonly out: string;
  readonly signal?: AbortSignal | undefined;
  readonly onRead?: (bytesRead: number, bytes: number) => void;
  readonly onStart?: (plan: Plan) => void;
  readonly onProgress?: (pagesDone: number, pages: number) => void;
  readonly onWarning?: ((warning: Problem) => void) | undefined;
}

export interface BuildThreadData {
  /** The options but the signal and the callbacks. */
  readonly options: { readonly out: string; readonly cwd?: string };
  /** The callbacks the caller gave (the thread sends only their messages). */
  readonly callbacks: {
    readonly onRead: boolean;
    readonly onStart: boolean;
    readonly onProgress: boolean;
    readonly onWarning: boolean;
  };
}

export type ThreadMessage<Plan = unknown, Result = unknown> =
  | { readonly type: 'read' | 'progress'; readonly done: number; readonly total: number }
  | { readonly type: 'start'; readonly plan: Plan }
  | { readonly type: 'warning'; readonly warning: Problem }
  | { readonly type: 'done'; readonly result: Result }
  | { readonly type: 'error'; readonly error: ErrorData };

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
  const release = out ? claimSite(out) : null;
  const data: BuildThreadData = {
    options: { cwd: process.cwd(), ...plain },
    callbacks: { onRead: !!onRead, onStart: !!onStart, onProgress: !!onProgress, onWarning: !!onWarning },
  };
  const worker = new Worker(WORKER_URL, {
    workerData: data,
    execArgv: PROFILING,
    resourceLimits: hooks.resourceLimits ?? LIMITS,
  });
  hooks.onThread?.(worker);
  const abort = () => worker.postMessage('abort');
  signal?.addEventListener('abort', abort, { once: true });
  let ended: { result: Result } | { error: Error } | undefined;
  let callbackError: { error: unknown } | undefined;
  let crash: Error | undefined;
  const call = (callback: () => void) => {
    if (callbackError) return;
    try {
      callback();
    } catch (error) {
      callbackError = { error };
      abort();
    }
  };
  worker.on('message', (message: ThreadMessage<Plan, Result>) => {
    if (message.type === 'read') call(() => onRead?.(message.done, message.total));
    else if (message.type === 'progress') call(() => onProgress?.(message.done, message.total));
    else if (message.type === 'start') call(() => onStart?.(message.plan));
    else if (message.type === 'warning') call(() => onWarning?.(message.warning));
    else if (message.type === 'done') ended = { result: message.result };
    else if (message.type === 'error') ended = { error: rebuiltError(message.error) };
  });
  worker.on('error', (error) => (crash ??= error));
  const code = await new Promise<number>((resolve) => worker.on('exit', resolve));
  signal?.removeEventListener('abort', abort);
  release?.();
  if (callbackError) throw callbackError.error;
  if (ended && 'result' in ended) return ended.result;
  if (ended) throw ended.error;
  // Its draft tree and lock are this process's: the next build would remove them, but now is better.
  if (out) await tidySite(out).catch(() => undefined);
  const why =
    (crash as NodeJS.ErrnoException | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY'
      ? 'ran out of memory'
      : crash
        ? `failed: ${crash.message}`
        : `stopped (exit code ${code})`;
  throw new CitiesApiError(
    `the build of ${options.out} ${why}; nothing half-written was left (the site is as it was, or whole if it was already in place): build again`,
  );
}
