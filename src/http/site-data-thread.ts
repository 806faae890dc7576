import type { Collation } from '../core/collation.js';
import type { Silent } from '../proc/channel.js';
import { startThread } from '../proc/workers.js';
import type { WasmMemory } from './page-memory.js';
import type { SiteData } from './site-data.js';

/** The site-data thread's one call: read the site under `root` (into the memory `into`, if given) and rank it. */
export interface SiteDataProtocol {
  readonly parent: Silent;
  readonly worker: {
    readonly calls: {
      /** `into`: whether the dataset was read into that memory (else into a new one). */
      read(site: { root: string; collation: Collation; into: WasmMemory | undefined }): {
        data: SiteData;
        into: boolean;
      };
    };
    readonly events: Record<never, never>;
  };
}

/**
 * readSiteData() in a thread of its own, started for this one read (its heap freed whole when it
 * ends): the thread that answers requests only receives the result, in shared memory (sharedData),
 * not copied. A thread that fails or dies is an error here, as readSiteData's would be. `into`: a
 * memory no site reads any more (site-memories.ts), where the dataset is read: the data's `memory`
 * is then that very object (this thread's pages of it are told apart by it: page-memory.ts).
 */
export async function readSiteDataInThread(root: string, collation: Collation, into?: WasmMemory): Promise<SiteData> {
  const thread = startThread<SiteDataProtocol>('http/site-data-worker', {
    name: `the reading of ${root}`,
    lowest: true,
  });
  try {
    const read = await thread.call('read', { root, collation, into });
    // The memory came back as another object of the same memory.
    return into && read.into ? { ...read.data, memory: into } : read.data;
  } finally {
    await thread.stop();
  }
}
