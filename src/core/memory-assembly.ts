import { writeUtf8, type Bytes } from './bytes.js';

// An ordinary page assembled where its storage lies, in a PageMemory (serve's): the head written
// at the scratch's start, then each run of cities copied by the memory, from the first to the last.

/**
 * A memory the storage's first `chunks` chunks lie in (each at its byteOffset), in which a page is
 * assembled by the memory's own copies, then copied out whole or lent as it lies (serve's:
 * http/page-memory.ts, a WebAssembly memory). JavaScript copies out of shared memory with relaxed atomic word stores,
 * about 0.6 instructions a byte (3,000 of a page of 7 cities); a WebAssembly memory.copy is a memmove.
 */
export interface PageMemory {
  /** How many of the storage's first chunks lie in the memory. */
  readonly chunks: number;
  /** Where the next page is assembled: a view of the memory, beginning at `scratchAt` in it; none while every scratch is held. */
  readonly scratch: Bytes | undefined;
  readonly scratchAt: number;
  /** Copies `length` bytes at `from` in the memory to `to` in it. */
  move(to: number, from: number, length: number): void;
  /** The scratch's first `size` bytes, copied into an array allocBytes() makes. */
  copyOut(size: number): Bytes;
  /**
   * The scratch's first `size` bytes as they lie, a view: overwritten by the next page assembled,
   * unless the memory is told that the view is still being read (http/page-memory.ts holdLent).
   */
  lend(size: number): Bytes;
}

const COMMA = 0x2c;
/** The page's last two bytes, `]}`. */
const [CLOSE_LIST, CLOSE_OBJECT] = [0x5d, 0x7d];

/**
 * assembleStored() in the storage's memory, of the storage's `spans`, chunk `offsets` and `joined`
 * (a CityStorage's): undefined when a city lies outside it, or the page would not fit its scratch.
 * `lent`: the page is the scratch's view (PageMemory.lend), not a copy.
 */
export function assembleInMemory(
  head: string,
  positions: Uint32Array,
  spans: Uint32Array,
  offsets: readonly number[],
  joined: number,
  memory: PageMemory,
  lent: boolean,
): Bytes | undefined {
  const { scratch, scratchAt } = memory;
  if (!scratch) return undefined;
  const n = positions.length;
  // The head's UTF-8 is at most 3 bytes a UTF-16 unit: room for it is checked before it is written.
  let room = head.length * 3 + Math.max(0, n - 1) + 2;
  for (let i = 0; i < n; i++) {
    const s = positions[i]! * 3;
    if (spans[s]! >= memory.chunks) return undefined;
    room += spans[s + 2]! - spans[s + 1]!;
  }
  if (room > scratch.length) return undefined;
  let at = writeUtf8(head, scratch, 0);
  for (let i = 0; i < n; i++) {
    const s = positions[i]! * 3;
    const chunk = spans[s]!;
    const from = spans[s + 1]!;
    let end = spans[s + 2]!;
    if (chunk < joined)
      for (; i + 1 < n; i++) {
        const after = positions[i + 1]! * 3;
        if (spans[after]! !== chunk || spans[after + 1]! !== end + 1) break;
        end = spans[after + 2]!;
      }
    memory.move(scratchAt + at, offsets[chunk]! + from, end - from);
    at += end - from;
    if (i + 1 < n) scratch[at++] = COMMA;
  }
  scratch[at++] = CLOSE_LIST;
  scratch[at++] = CLOSE_OBJECT;
  return lent ? memory.lend(at) : memory.copyOut(at);
}
