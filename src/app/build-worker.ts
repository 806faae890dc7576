import { lowestPriority } from '../proc/priority.js';
import { parentChannel } from '../proc/workers.js';
import { buildHere, type BuildPlan, type BuildResult, type SiteBuildOptions } from './build.js';
import type { BuildProtocol } from './build-thread.js';

// The thread a large build runs in (build-thread.ts): the build, its callbacks sent back as
// events (progress at most every PROGRESS_MS, and always its last step), its end as the result
// or the error. The thread it answers to can stop it (the call's signal, as build()'s).

const PROGRESS_MS = 20;
const parent = parentChannel<BuildProtocol<BuildPlan, BuildResult>>();

/** A progress callback that sends its step when PROGRESS_MS have passed since the last sent, or when it is the last. */
function throttled(type: 'read' | 'progress'): (done: number, total: number) => void {
  let last = -Infinity;
  return (done, total) => {
    const now = performance.now();
    if (done < total && now - last < PROGRESS_MS) return;
    last = now;
    parent.emit(type, [done, total]);
  };
}

parent.handle('build', ({ options, callbacks }, signal) => {
  // The writer threads this thread starts take its priority (on Linux a new thread inherits it).
  if (options.background) lowestPriority();
  return buildHere({
    ...(options as SiteBuildOptions),
    signal,
    ...(callbacks.onRead && { onRead: throttled('read') }),
    ...(callbacks.onStart && { onStart: (plan) => parent.emit('start', plan) }),
    ...(callbacks.onWarning && { onWarning: (warning) => parent.emit('warning', warning) }),
    ...(callbacks.onProgress && { onProgress: throttled('progress') }),
  });
});
