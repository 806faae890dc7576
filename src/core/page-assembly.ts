import {
  allocatedOffset,
  allocBytes,
  inSharedMemory,
  setBytesAligned,
  setBytesBefore,
  typedArrayCall,
  utf8,
  writeUtf8,
  type Bytes,
} from './bytes.js';
import { assembleInMemory, type PageMemory } from './memory-assembly.js';

// An ordinary page's bytes as one buffer: the head, the cities with commas between, `]}`. Every
// computed page of the server is made here, so each step is counted: sized first, then each city
// copied once, from the last to the first (setBytesBefore may overwrite up to 7 bytes before a
// city's place: the comma, the city before it and, last, the head cover them). Where the storage
// lies in a PageMemory (serve's), a page is assembled there instead, from the first city to the last.

/** Where cities' serialized bytes lie: city `p` is bytes [spans[3p+1], spans[3p+2]) of chunks[spans[3p]] (a CityTable's storage). */
export interface CityStorage {
  readonly chunks: readonly Bytes[];
  readonly spans: Uint32Array;
  /** Each chunk's buffer and byteOffset in it, and whether the chunks lie in shared memory: asked once, not per page. */
  readonly buffers: readonly ArrayBufferLike[];
  readonly offsets: readonly number[];
  readonly shared: boolean;
  /** Chunks below this index hold their cities with one comma after each: neighbours there are copied as one run. */
  readonly joined: number;
  /** The memory the first chunks lie in, where a runtime has one to assemble pages in (serve's). */
  readonly memory?: PageMemory | undefined;
}

/** A storage's fields for `chunks` and `spans`. */
export function cityStorage(
  chunks: readonly Bytes[],
  spans: Uint32Array,
  joined = 0,
  memory?: PageMemory,
): CityStorage {
  return {
    chunks,
    spans,
    buffers: chunks.map((chunk) => chunk.buffer),
    offsets: chunks.map((chunk) => chunk.byteOffset),
    shared: chunks.some(inSharedMemory),
    joined,
    memory,
  };
}

/** The city at `position` of a storage, as a view. */
export function storedCity({ chunks, spans }: CityStorage, position: number): Bytes {
  const s = position * 3;
  return chunks[spans[s]!]!.subarray(spans[s + 1], spans[s + 2]);
}

/** Where assemble() writes a page's head first, to learn its UTF-8 length (heads longer than a third of it are encoded apart). */
const HEAD_SCRATCH = new Uint8Array(16 * 1024);
const HEAD_BUFFER = HEAD_SCRATCH.buffer;
/** What separates the cities of a page, and what ends it. */
export const COMMA = utf8(',');
export const TAIL = utf8(']}');

/**
 * The head encoded before it is measured: it is a string made of pieces, which V8 reads
 * character by character at 40 instructions each (utf8Length).
 */
function headBytes(head: string): Bytes {
  return head.length * 3 <= HEAD_SCRATCH.length
    ? new Uint8Array(HEAD_BUFFER, 0, writeUtf8(head, HEAD_SCRATCH, 0))
    : utf8(head);
}

/** The page of the cities `city(0..n-1)`. */
export function assemble(head: string, n: number, city: (i: number) => Bytes): Bytes {
  const start = headBytes(head);
  const cities = new Array<Bytes>(n);
  let size = start.length + Math.max(0, n - 1) + TAIL.length;
  for (let i = 0; i < n; i++) size += (cities[i] = city(i)).length;
  const out = allocBytes(size);
  // A page's cities come from one index: where the first lies, all do (asked once, not per city).
  const shared = n > 0 && inSharedMemory(cities[0]!);
  let at = size - TAIL.length;
  out[at] = TAIL[0]!;
  out[at + 1] = TAIL[1]!;
  for (let i = n - 1; i >= 0; i--) {
    setBytesBefore(out, cities[i]!, (at -= cities[i]!.length), shared);
    if (i) out[--at] = COMMA[0]!;
  }
  typedArrayCall.set(out, start, 0);
  return out;
}

/**
 * The page of the cities at `positions` of a storage: assemble() with each city's place read from
 * the spans, so that no property of a city's view is asked (each such read went through V8's
 * generic load: 3.3k instructions of a page of 7). Cities that lie one after another in a joined
 * chunk, commas between, are copied as one run (a page in the order the storage is laid out in: one copy).
 */
export function assembleStored(head: string, positions: Uint32Array, storage: CityStorage, lent = false): Bytes {
  return (
    (storage.memory &&
      assembleInMemory(head, positions, storage.spans, storage.offsets, storage.joined, storage.memory, lent)) ||
    copied(head, positions, storage)
  );
}

function copied(head: string, positions: Uint32Array, { spans, buffers, offsets, shared, joined }: CityStorage): Bytes {
  const start = headBytes(head);
  const n = positions.length;
  let size = start.length + Math.max(0, n - 1) + TAIL.length;
  for (let i = 0; i < n; i++) {
    const s = positions[i]! * 3;
    size += spans[s + 2]! - spans[s + 1]!;
  }
  const out = allocBytes(size);
  const outOffset = allocatedOffset(out);
  let at = size - TAIL.length;
  out[at] = TAIL[0]!;
  out[at + 1] = TAIL[1]!;
  for (let i = n - 1; i >= 0; i--) {
    const s = positions[i]! * 3;
    const chunk = spans[s]!;
    const end = spans[s + 2]!;
    let from = spans[s + 1]!;
    if (chunk < joined)
      for (; i > 0; i--) {
        const before = positions[i - 1]! * 3;
        if (spans[before]! !== chunk || spans[before + 2]! + 1 !== from) break;
        from = spans[before + 1]!;
      }
    const length = end - from;
    at -= length;
    const offset = offsets[chunk]! + from;
    // A view made by the constructor: subarray() would look its constructor up first (species).
    setBytesAligned(out, outOffset, new Uint8Array(buffers[chunk]!, offset, length), offset, at, shared);
    if (i) out[--at] = COMMA[0]!;
  }
  typedArrayCall.set(out, start, 0);
  return out;
}
