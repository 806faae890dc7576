import type { ServerResponse } from 'node:http';
import type { PageMemory } from '../core/memory-assembly.js';
import type { PageIndex } from '../core/page.js';
import { PAGE, type Scratch, ScratchPages, type WasmMemory } from './scratch-pages.js';

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

export type { WasmMemory } from './scratch-pages.js';

const WASM = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;
/**
 * Pages a dataset's memory may grow to: WebAssembly's most. V8 reserves the same address space for
 * any maximum (10 GiB), and a memory reused for a larger dataset grows (site-memories.ts).
 */
const MAXIMUM_PAGES = 65536;

/**
 * `size` bytes at the start of a shared memory, where scratches are grown after them: `reused` (a
 * replaced site's, reclaim()) grown to hold them if it must, else a new one; undefined where
 * WebAssembly is missing (node --jitless) or the memory cannot be had.
 */
export function datasetMemory(
  size: number,
  reused?: WasmMemory,
): { memory: WasmMemory; bytes: Uint8Array } | undefined {
  if (!WASM) return undefined;
  if (reused)
    try {
      const room = reused.buffer.byteLength;
      if (size > room) reused.grow(Math.ceil((size - room) / PAGE));
      return { memory: reused, bytes: new Uint8Array(reused.buffer, 0, size) };
    } catch {
      // At its maximum: a new memory.
    }
  try {
    const memory = new WASM.Memory({ initial: Math.ceil(size / PAGE), maximum: MAXIMUM_PAGES, shared: true });
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

/** This thread's PageMemory of each memory (a site's index made twice here shares its scratches). */
const made = new WeakMap<WasmMemory, ScratchPages | null>();
/** This thread's scratches of each memory reclaimed, for the PageMemory of the dataset read into it next. */
const spare = new WeakMap<WasmMemory, Scratch[]>();

/**
 * This thread's PageMemory of `memory`, in which a table's `chunks` lie, its first scratch after
 * them. Undefined when this thread has no scratch left of it (pages are then copied by JavaScript,
 * as from any shared memory) or WebAssembly is missing.
 */
export function pageMemory(memory: WasmMemory, chunks: readonly Uint8Array[]): PageMemory | undefined {
  let pages = made.get(memory);
  if (pages === undefined) {
    const end = chunks.reduce((most, chunk) => Math.max(most, chunk.byteOffset + chunk.byteLength), 0);
    moveModule ??= WASM && new WASM.Module(MOVE_MODULE);
    const move = WASM && (new WASM.Instance(moveModule!, { m: { memory } }).exports.move as PageMemory['move']);
    pages = move ? new ScratchPages(memory, chunks.length, move, end, spare.get(memory) ?? []) : null;
    spare.delete(memory);
    if (!pages?.scratch) pages = null;
    made.set(memory, pages);
  }
  return pages ?? undefined;
}

/**
 * `memory` taken back from the site whose dataset lay in it, for the next load to read its dataset
 * into (site-memories.ts): the old site's PageMemory assembles nothing more there, and this thread's
 * scratches of it go to the next one (those its dataset leaves free). False, and nothing changed,
 * while a page lent from it is still being sent.
 */
export function reclaim(memory: WasmMemory): boolean {
  const pages = made.get(memory);
  if (pages?.sending) return false;
  made.delete(memory);
  if (pages) spare.set(memory, pages.retire());
  return true;
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
