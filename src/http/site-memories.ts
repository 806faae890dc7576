import type { ServerResponse } from 'node:http';
import { reclaim, type WasmMemory } from './page-memory.js';

// The WebAssembly memories a server's sites are read into (page-memory.ts), each reused by a later
// load once the site it held is replaced and no answer reads it any more. Only a full collection
// frees such a memory, and its size never prompts one: a memory made for every reload piled up
// (a 20k site reloaded 150 times in one process: 1.5 GB of RSS).

/**
 * Memories kept for the next loads: the one the last swap freed, and one a slow answer gave back
 * later. More, freed meanwhile, are left to the collector.
 */
const KEPT = 2;

/** A server's memories no site reads any more, for its next loads to read their datasets into. */
export class SiteMemories {
  private readonly free: WasmMemory[] = [];

  /** A memory to read the next site into, if one is free (none of its scratches still sent: reclaim()). */
  take(): WasmMemory | undefined {
    for (let memory = this.free.pop(); memory; memory = this.free.pop()) if (reclaim(memory)) return memory;
    return undefined;
  }

  /** `memory`, which nothing reads any more (a replaced site's, or one a load took but did not use): kept for a next load. */
  give(memory: WasmMemory): void {
    if (this.free.length < KEPT && !this.free.includes(memory)) this.free.push(memory);
  }

  /** The lease of a loaded site's data, read into `memory` (none: a SharedArrayBuffer, nothing to give back). */
  lease(memory: WasmMemory | undefined): SiteLease {
    return new SiteLease(memory, this);
  }
}

/**
 * A loaded site's hold on the memory its dataset lies in: given back (SiteMemories) once the site
 * is replaced (end()) and every answer that may still read it is over (hold()).
 */
export class SiteLease {
  private holds = 0;
  private ended = false;

  constructor(
    private memory: WasmMemory | undefined,
    private readonly memories: SiteMemories,
  ) {}

  /**
   * An answer of this site not over when its handler returned: it may read the site's dataset until
   * `pending` (its later part) settles, then until `res` has been sent whole or closes (a large page
   * streamed from the dataset as the client takes it, a page lent from the memory's scratch).
   */
  hold(res: ServerResponse, pending?: Promise<unknown>): void {
    if (!this.memory) return;
    this.holds++;
    const over = () => {
      this.holds--;
      this.settle();
    };
    const untilSent = () => (res.writableFinished || res.closed ? over() : res.once('close', over));
    if (pending) pending.then(untilSent, untilSent);
    else untilSent();
  }

  /** The site is answered no more (a newer one is, or the server closed): its memory goes back once no answer reads it. */
  end(): void {
    this.ended = true;
    this.settle();
  }

  private settle(): void {
    if (!this.ended || this.holds || !this.memory) return;
    const memory = this.memory;
    this.memory = undefined;
    this.memories.give(memory);
  }
}
