import { stat } from 'node:fs/promises';
import type { Silent } from '../proc/channel.js';
import { startThread } from '../proc/workers.js';
import { readDataset } from './read-dataset.js';

// The ids a dataset file holds, for a reader that needs no more of it (which logged cities the file
// lacks): a large file is read and validated in a thread of its own, at the lowest priority, so
// that the thread answering requests is never held by it (issue #26: 140,000 cities took seconds).

/** Files from this size are read in a thread (as builds are: app/build.ts); below it, starting one costs more than the read. */
export const IDS_THREAD_FROM = 1024 * 1024;

/** fileIds()'s thread (ids-worker.ts): one call, the ids of a file. */
export interface IdsProtocol {
  readonly parent: Silent;
  readonly worker: { readonly calls: { ids(file: string): Float64Array }; readonly events: Record<never, never> };
}

/** The ids `file` holds (read and validated whole: an invalid file throws readDataset's error), off this thread when large. */
export async function fileIds(file: string): Promise<Float64Array> {
  const { size } = await stat(file);
  if (size < IDS_THREAD_FROM) return (await readDataset(file)).ids;
  const thread = startThread<IdsProtocol>('dataset/ids-worker', {
    name: `the read of ${file}'s ids`,
    lowest: true,
    // Its objects that live are the table's few large buffers (as a build's: build-thread.ts).
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  try {
    return await thread.call('ids', file);
  } finally {
    await thread.stop();
  }
}
