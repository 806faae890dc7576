import { allocBytes } from '../core/bytes.js';
import type { PageMemory } from '../core/page-assembly.js';

// A served site's dataset read into a shared WebAssembly memory, where each thread that answers
// assembles its computed pages (core/page-assembly.ts): the cities are copied by WebAssembly's
// memory.copy, a memmove, and the page copied out by node's Buffer#fill, a memcpy. JavaScript's
// own copies out of shared memory (TypedArray#set, Buffer#copy, the constructors) move relaxed
// atomic words, about 3,000 instructions of a page of 7 cities. The memory stays shared: the thread
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
/** Answering threads a memory has room for (each grows it by its scratch once). */
const THREADS = 16;

/**
 * `size` bytes at the start of a new shared memory, with room for THREADS scratches after them;
 * undefined where WebAssembly is missing (node --jitless) or the memory cannot be had.
 */
export function datasetMemory(size: number): { memory: WasmMemory; bytes: Uint8Array } | undefined {
  if (!WASM) return undefined;
  const initial = Math.ceil(size / PAGE);
  try {
    const memory = new WASM.Memory({ initial, maximum: initial + THREADS * SCRATCH_PAGES, shared: true });
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
/** This thread's PageMemory of each memory (a site's index made twice here shares one scratch). */
const made = new WeakMap<WasmMemory, PageMemory | null>();

/**
 * This thread's PageMemory of `memory`, whose first `chunks` chunks of a table lie in it: its
 * scratch grown onto the memory. Undefined when the memory has no room left for another (the
 * pages are then copied by JavaScript, as from any shared memory).
 */
export function pageMemory(memory: WasmMemory, chunks: number): PageMemory | undefined {
  let pages = made.get(memory);
  if (pages === undefined) made.set(memory, (pages = scratchOf(memory, chunks)));
  return pages ?? undefined;
}

function scratchOf(memory: WasmMemory, chunks: number): PageMemory | null {
  if (!WASM) return null;
  let scratchAt: number;
  try {
    scratchAt = memory.grow(SCRATCH_PAGES) * PAGE;
  } catch {
    return null; // at its maximum: THREADS threads have a scratch already
  }
  moveModule ??= new WASM.Module(MOVE_MODULE);
  const move = new WASM.Instance(moveModule, { m: { memory } }).exports.move as PageMemory['move'];
  // After the growth: a view of the memory made before it ends where the memory then did.
  const scratch = new Uint8Array(memory.buffer, scratchAt, SCRATCH_PAGES * PAGE);
  return {
    chunks,
    scratch,
    scratchAt,
    move,
    // Node's Buffer#fill, given an array at least as long as the range, copies it with one memcpy (node_buffer.cc).
    copyOut: (size) => fill.call(allocBytes(size) as Buffer, scratch, 0, size),
  };
}
