import type { Collation } from '../core/collation.js';
import type { Silent } from '../proc/channel.js';
import { startThread } from '../proc/workers.js';
import type { WasmMemory } from './page-memory.js';
import type { SiteData } from './site-data.js';

/** The site-data thread's one call: read the site under `root` and rank it. */
export interface SiteDataProtocol {
  readonly parent: Silent;
  readonly worker: {
    /** `inMemory`: the dataset read into a WebAssembly memory (page-memory.ts), else a SharedArrayBuffer. */
    readonly calls: { read(site: { root: string; collation: Collation; inMemory: boolean }): SiteData };
    readonly events: Record<never, never>;
  };
}

/**
 * readSiteData() in a thread of its own, started for this one read (its heap freed whole when it
 * ends): the thread that answers requests only receives the result, in shared memory (sharedData),
 * not copied. A thread that fails or dies is an error here, as readSiteData's would be.
 */
export async function readSiteDataInThread(root: string, collation: Collation): Promise<SiteData> {
  const thread = startThread<SiteDataProtocol>('http/site-data-worker', {
    name: `the reading of ${root}`,
    lowest: true,
  });
  try {
    const data = await thread.call('read', { root, collation, inMemory: !lastMemory?.deref() });
    if (data.memory) lastMemory = new WeakRef(data.memory);
    return data;
  } finally {
    await thread.stop();
  }
}

/**
 * The WebAssembly memory the last read here made: while it is alive (its site still answering,
 * or not yet collected), the next read goes to a SharedArrayBuffer. Only a full collection frees
 * such a memory, and its size does not prompt one: a memory a reload piled up, for good (a 20k
 * site reloaded 150 times: 1.5 GB of RSS).
 */
let lastMemory: WeakRef<WasmMemory> | undefined;
