import { parentPort, workerData } from 'node:worker_threads';
import { buildHere, type BuildPlan, type BuildResult, type SiteBuildOptions } from './build.js';
import { errorData } from './thread-error.js';
import type { BuildThreadData, ThreadMessage } from './build-thread.js';

// The thread a large build runs in (build-thread.ts): the build, its callbacks sent back as
// messages (progress at most every PROGRESS_MS, and always its last step), its end as the result
// or the error as data. The thread it answers to can stop it ('abort', as the signal would).

const PROGRESS_MS = 20;
const { options, callbacks } = workerData as BuildThreadData & { options: SiteBuildOptions };
const controller = new AbortController();
const send = (message: ThreadMessage<BuildPlan, BuildResult>) => parentPort!.postMessage(message);
parentPort!.on('message', (message: string) => {
  if (message === 'abort') controller.abort();
});

/** A progress callback that sends its step when PROGRESS_MS have passed since the last sent, or when it is the last. */
function throttled(type: 'read' | 'progress'): (done: number, total: number) => void {
  let last = -Infinity;
  return (done, total) => {
    const now = performance.now();
    if (done < total && now - last < PROGRESS_MS) return;
    last = now;
    send({ type, done, total });
  };
}

const threadOptions: SiteBuildOptions = {
  ...options,
  signal: controller.signal,
  ...(callbacks.onRead && { onRead: throttled('read') }),
  ...(callbacks.onStart && { onStart: (plan) => send({ type: 'start', plan }) }),
  ...(callbacks.onWarning && { onWarning: (warning) => send({ type: 'warning', warning }) }),
  ...(callbacks.onProgress && { onProgress: throttled('progress') }),
};
try {
  send({ type: 'done', result: await buildHere(threadOptions) });
} catch (error) {
  send({ type: 'error', error: errorData(error) });
}
parentPort!.close();
