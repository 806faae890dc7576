import type { ServerResponse } from 'node:http';
import { allocBytes } from '../core/bytes.js';
import type { PageMemory } from '../core/memory-assembly.js';

// A thread's scratches of a shared WebAssembly memory (page-memory.ts): the one its pages are
// assembled in, the others free or set aside while a page lent from them is still being sent.

/** A shared WebAssembly.Memory. */
export interface WasmMemory {
  readonly buffer: SharedArrayBuffer;
  grow(pages: number): number;
}

/** A WebAssembly page. */
export const PAGE = 64 * 1024;
/** Each answering thread's scratch, where its pages are assembled: larger pages are copied by JavaScript. */
const SCRATCH_PAGES = 16;
/**
 * Scratches a thread takes of a memory: one, and another while a page of its scratch is still being
 * sent (a client reading slowly). Virtual memory: only what pages were written in is ever resident.
 */
const SCRATCHES = 32;

/** A scratch of a memory: a view of it, where it begins in the memory, and the memory's buffer the view lies in. */
export interface Scratch {
  readonly view: Uint8Array;
  readonly at: number;
  readonly buffer: SharedArrayBuffer;
}

const { fill } = Buffer.prototype;

/** A PageMemory: this thread's scratches of the memory, the one pages are assembled in, the others free or held. */
export class ScratchPages implements PageMemory {
  scratch: Uint8Array | undefined;
  scratchAt = 0;
  /** The buffer the scratch lies in (a view's `buffer` read in optimized code went through V8's generic load). */
  private scratchBuffer: SharedArrayBuffer | undefined;
  /** The page lend() made last, while it may still be sent (holdLent). */
  lent: Uint8Array | undefined;
  /** Scratches no page is being sent from, but the one in use. */
  private free: Scratch[];
  /** Scratches taken of the memory: in use, free or held. */
  private taken: number;
  /** Scratches held: a page lent from each is still being sent. */
  sending = 0;

  /**
   * `chunks`: how many of the table's chunks lie in the memory; `spare`: this thread's scratches of
   * it from the dataset it held before (page-memory.ts reclaim), of which those from `end` on are free.
   */
  constructor(
    private readonly memory: WasmMemory,
    readonly chunks: number,
    readonly move: PageMemory['move'],
    end: number,
    spare: readonly Scratch[],
  ) {
    this.free = spare.filter((scratch) => scratch.at >= end).slice(0, SCRATCHES);
    this.taken = this.free.length;
    this.use(this.free.pop() ?? this.grown());
  }

  copyOut(size: number): Uint8Array {
    return fill.call(allocBytes(size) as Buffer, this.scratch!, 0, size);
  }

  lend(size: number): Uint8Array {
    // A view made by the constructor: subarray() would look its constructor up first (species).
    return (this.lent = new Uint8Array(this.scratchBuffer!, this.scratchAt, size));
  }

  /** The page lent last is held until `res` closes: the scratch it lies in is set aside until then. */
  hold(res: ServerResponse): void {
    const held: Scratch = { view: this.scratch!, at: this.scratchAt, buffer: this.scratchBuffer! };
    this.lent = undefined;
    this.sending++;
    this.use(this.free.pop() ?? this.grown());
    const release = () => {
      this.sending--;
      if (this.scratch) this.free.push(held);
      else this.use(held);
    };
    // Closed already (its client left): node writes nothing more of it.
    if (res.closed) release();
    else res.once('close', release);
  }

  /** Its scratches, none held, given up (page-memory.ts reclaim): it assembles nothing more in them. */
  retire(): Scratch[] {
    const scratches = this.free;
    if (this.scratch) scratches.push({ view: this.scratch, at: this.scratchAt, buffer: this.scratchBuffer! });
    this.free = [];
    this.use(undefined);
    return scratches;
  }

  private use(scratch: Scratch | undefined): void {
    this.scratch = scratch?.view;
    this.scratchAt = scratch?.at ?? 0;
    this.scratchBuffer = scratch?.buffer;
  }

  /** A new scratch grown onto the memory; undefined once this thread took SCRATCHES, or the memory is at its maximum. */
  private grown(): Scratch | undefined {
    if (this.taken >= SCRATCHES) return undefined;
    let at: number;
    try {
      at = this.memory.grow(SCRATCH_PAGES) * PAGE;
    } catch {
      return undefined;
    }
    this.taken++;
    // After the growth: a view of the memory made before it ends where the memory then did.
    const buffer = this.memory.buffer;
    return { view: new Uint8Array(buffer, at, SCRATCH_PAGES * PAGE), at, buffer };
  }
}
