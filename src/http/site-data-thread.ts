import type { Collation } from '../core/collation.js';
import { CitiesApiError } from '../core/errors.js';
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

const startReader = (name: string): Reader =>
  startThread<SiteDataProtocol>('http/site-data-worker', { name, lowest: true });

/**
 * readSiteData() in a thread of its own, started for this one read (its heap freed whole when it
 * ends). The thread that answers requests only receives the result, in shared memory
 * (sharedData), not copied. A thread that fails or dies is an error here, as readSiteData's would
 * be. `into`: a memory no site reads any more (site-memories.ts), where the dataset is read: the
 * data's `memory` is then that very object (this thread's pages of it are told apart by it:
 * page-memory.ts).
 */
export const readSiteDataInThread: ReadSite = (root, collation, into) =>
  readIn(startReader(`the reading of ${root}`), root, collation, into);

async function readIn(thread: Reader, root: string, collation: Collation, into?: WasmMemory): Promise<SiteData> {
  thread.worker.thread?.ref();
  try {
    const read = await thread.call('read', { root, collation, into });
    // The memory came back as another object of the same memory.
    return into && read.into ? { ...read.data, memory: into } : read.data;
  } finally {
    await thread.stop();
  }
}

/** readSiteDataInThread for one served site: a thread started ahead of its next read, and none left once closed. */
export interface ThreadReader extends ReadSite {
  /**
   * Starts the thread the next read will use, if none waits yet: called as a build begins. A
   * thread's start (~25 ms of CPU) runs at the priority of the thread that starts it, the answering
   * thread's, until it lowers its own: started at the read, right after a rebuild, it competed with
   * answering then (with --workers N, N of them at once); started as the build begins, it is over
   * long before. Nothing once closed.
   */
  prepare(): void;
  /** Ends its threads (a read under way then fails), and starts none again: resolves once they have ended. */
  close(): Promise<void>;
}

/** A ThreadReader: a server's (LiveSite), which closes it with itself, so that a library caller's closed server leaves no thread. */
export function threadReader(): ThreadReader {
  /** The thread started ahead of the next read (prepare), waiting for it. */
  let spare: Reader | undefined;
  const running = new Set<Reader>();
  let closed = false;
  const start = (name: string) => {
    const reader = startReader(name);
    running.add(reader);
    void reader.ended.then(() => {
      running.delete(reader);
      if (spare === reader) spare = undefined;
    });
    return reader;
  };
  const read: ReadSite = async (root, collation, into) => {
    if (closed) throw new CitiesApiError(`the reading of ${root} was not started: its server is closed`);
    const thread = spare ?? start(`the reading of ${root}`);
    spare = undefined;
    return readIn(thread, root, collation, into);
  };
  return Object.assign(read, {
    prepare(): void {
      if (spare || closed) return;
      spare = start('the reading of a served site');
      spare.worker.thread?.unref(); // waiting, it keeps no process alive
    },
    async close(): Promise<void> {
      closed = true;
      await Promise.all([...running].map((reader) => reader.stop()));
    },
  });
}
