import type { Collation } from '../core/collation.js';
import type { Silent } from '../proc/channel.js';
import { startThread, type WorkerChannel } from '../proc/workers.js';
import type { WasmMemory } from './page-memory.js';
import type { SiteData } from './site-data.js';
import type { ReadSite } from './site-state.js';

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

type Reader = WorkerChannel<SiteDataProtocol>;

/** A thread started ahead of the next read (prepareRead), waiting for it. */
let spare: Reader | undefined;

const startReader = (name: string): Reader =>
  startThread<SiteDataProtocol>('http/site-data-worker', { name, lowest: true });

/**
 * Starts the thread the next read will use, if none waits yet: called as a build begins. A thread's
 * start (~25 ms of CPU) runs at the priority of the thread that starts it, the answering thread's,
 * until it lowers its own: started at the read, right after a rebuild, it competed with answering
 * then (with --workers N, N of them at once); started as the build begins, it is over long before.
 */
export function prepareRead(): void {
  if (spare) return;
  const reader = startReader('the reading of a served site');
  reader.worker.thread?.unref(); // waiting, it keeps no process alive
  void reader.ended.then(() => {
    if (spare === reader) spare = undefined;
  });
  spare = reader;
}

/**
 * readSiteData() in a thread of its own, used for this one read (its heap freed whole when it
 * ends): the one prepareRead() started, else one started now. The thread that answers requests
 * only receives the result, in shared memory (sharedData), not copied. A thread that fails or dies
 * is an error here, as readSiteData's would be. `into`: a memory no site reads any more
 * (site-memories.ts), where the dataset is read: the data's `memory` is then that very object (this
 * thread's pages of it are told apart by it: page-memory.ts).
 */
export const readSiteDataInThread: ReadSite = Object.assign(
  async (root: string, collation: Collation, into?: WasmMemory): Promise<SiteData> => {
    const thread = spare ?? startReader(`the reading of ${root}`);
    spare = undefined;
    thread.worker.thread?.ref();
    try {
      const read = await thread.call('read', { root, collation, into });
      // The memory came back as another object of the same memory.
      return into && read.into ? { ...read.data, memory: into } : read.data;
    } finally {
      await thread.stop();
    }
  },
  { prepare: prepareRead },
);
