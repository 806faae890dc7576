import type { ServerResponse } from 'node:http';
import { allocBytes } from '../core/bytes.js';
import type { PageMemory } from '../core/memory-assembly.js';
import type { PageIndex } from '../core/page.js';

// A served site's dataset read into a shared WebAssembly memory, where each thread that answers
// assembles its computed pages (core/memory-assembly.ts): the cities are copied by WebAssembly's
// memory.copy, a memmove; a page sent at once is handed to node as it lies (holdLent sets its
// scratch aside while a slow client still reads it), any other copied out by node's Buffer#fill, a
// memcpy. JavaScript's own copies out of shared memory (TypedArray#set, Buffer#copy, the
// constructors) move relaxed atomic words, about 3,000 instructions of a page of 7 cities. The memory stays shared: the thread
// that answers counts no external memory for it (an ArrayBuffer of the dataset did, and V8 started
// a full collection at every load, site-data.ts).

/** The few parts of the WebAssembly API used here (this package compiles without the DOM's types). */
interface WebAssemblyApi {
  Memory: new (limits: { initial: number; maximum: number; shared: true }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}

/** A shared WebAssembly.Memory. */
export interface WasmMemory {
  readonly buffer: SharedArrayBuffer;
  grow(pages: number): number;
}

const WASM = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;
const PAGE = 64 * 1024;
/** Each answering thread's scratch, where its pages are assembled: larger pages are copied by JavaScript. */
const SCRATCH_PAGES = 16;
/**
 * Scratches a memory has room for, all threads together: each thread grows one, and another while
 * a page of its scratch is still being sent (a client reading slowly). Virtual memory: only what
 * pages were written in is ever resident.
 */
const SCRATCHES = 32;

/**
 * `size` bytes at the start of a new shared memory, with room for SCRATCHES scratches after them;
 * undefined where WebAssembly is missing (node --jitless) or the memory cannot be had.
 */
export function datasetMemory(size: number): { memory: WasmMemory; bytes: Uint8Array } | undefined {
  if (!WASM) return undefined;
  const initial = Math.ceil(size / PAGE);
  try {
    const memory = new WASM.Memory({ initial, maximum: initial + SCRATCHES * SCRATCH_PAGES, shared: true });
    return { memory, bytes: new Uint8Array(memory.buffer, 0, size) };
  } catch {
    return undefined; // a RangeError: beyond WebAssembly's 4 GiB, or no address space left
  }
}

// (module
//   (import "m" "memory" (memory 1 65536 shared))
//   (func (export "move") (param $to i32) (param $from i32) (param $length i32)
//     (memory.copy (local.get $to) (local.get $from) (local.get $length))))
// biome-ignore format: a row per section
const MOVE_MODULE = Uint8Array.of(
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x07, 0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x00, // types: (i32, i32, i32) -> ()
  0x02, 0x10, 0x01, 0x01, 0x6d, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x03, 0x01, 0x80, 0x80, 0x04, // import m.memory, shared, 1 to 65536 pages
  0x03, 0x02, 0x01, 0x00, // one function, of type 0
  0x07, 0x08, 0x01, 0x04, 0x6d, 0x6f, 0x76, 0x65, 0x00, 0x00, // exported as "move"
  0x0a, 0x0e, 0x01, 0x0c, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfc, 0x0a, 0x00, 0x00, 0x0b, // its body
);
let moveModule: object | undefined;

const { fill } = Buffer.prototype;
/** This thread's PageMemory of each memory (a site's index made twice here shares its scratches). */
const made = new WeakMap<WasmMemory, ScratchPages | null>();

/**
 * This thread's PageMemory of `memory`, whose first `chunks` chunks of a table lie in it, its
 * first scratch grown onto the memory. Undefined when the memory has no room left for one (pages
 * are then copied by JavaScript, as from any shared memory) or WebAssembly is missing.
 */
export function pageMemory(memory: WasmMemory, chunks: number): PageMemory | undefined {
  let pages = made.get(memory);
  if (pages === undefined) {
    pages = WASM ? new ScratchPages(memory, chunks) : null;
    if (!pages?.scratch) pages = null;
    made.set(memory, pages);
  }
  return pages ?? undefined;
}

/**
 * `page`, answered by answerListing(..., sentAtOnce) from `index`, is still being sent: node holds
 * it until `res` closes. Where it was lent from a memory's scratch, that scratch is set aside until
 * then (pages are assembled in another), so that no page is written over one still being sent.
 */
export function holdLent(index: PageIndex, page: Uint8Array, res: ServerResponse): void {
  const memory = index.storage?.memory;
  if (memory instanceof ScratchPages && memory.lent === page) memory.hold(res);
}

/** A scratch of a memory: a view of it, where it begins in the memory, and the memory's buffer the view lies in. */
interface Scratch {
  readonly view: Uint8Array;
  readonly at: number;
  readonly buffer: SharedArrayBuffer;
}

/** A PageMemory: this thread's scratches of the memory, the one pages are assembled in, the others free or held. */
class ScratchPages implements PageMemory {
  scratch: Uint8Array | undefined;
  scratchAt = 0;
  /** The buffer the scratch lies in (a view's `buffer` read in optimized code went through V8's generic load). */
  private scratchBuffer: SharedArrayBuffer | undefined;
  /** The page lend() made last, while it may still be sent (holdLent). */
  lent: Uint8Array | undefined;
  readonly move: PageMemory['move'];
  /** Scratches no page is being sent from, but the one in use. */
  private readonly free: Scratch[] = [];

  constructor(
    private readonly memory: WasmMemory,
    readonly chunks: number,
  ) {
    moveModule ??= new WASM!.Module(MOVE_MODULE);
    this.move = new WASM!.Instance(moveModule, { m: { memory } }).exports.move as PageMemory['move'];
    this.use(this.grown());
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
    this.use(this.free.pop() ?? this.grown());
    const release = () => (this.scratch ? this.free.push(held) : this.use(held));
    // Closed already (its client left): node writes nothing more of it.
    if (res.closed) release();
    else res.once('close', release);
  }

  private use(scratch: Scratch | undefined): void {
    this.scratch = scratch?.view;
    this.scratchAt = scratch?.at ?? 0;
    this.scratchBuffer = scratch?.buffer;
  }

  /** A new scratch grown onto the memory; undefined once it is at its maximum (SCRATCHES taken, by every thread). */
  private grown(): Scratch | undefined {
    let at: number;
    try {
      at = this.memory.grow(SCRATCH_PAGES) * PAGE;
    } catch {
      return undefined;
    }
    // After the growth: a view of the memory made before it ends where the memory then did.
    const buffer = this.memory.buffer;
    return { view: new Uint8Array(buffer, at, SCRATCH_PAGES * PAGE), at, buffer };
  }
}
