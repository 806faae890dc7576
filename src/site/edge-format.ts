import { CitiesApiError } from '../core/errors.js';
import { expandCity } from './compact-cities.js';

// The binary files an edge function reads (route table: ROUTES.edge), little-endian, each after a
// 16-byte header: a magic, the tag of the data they were built from (so files of two builds are
// never combined), and the number of entries.
//   ranks: count × u32 positions in ascending order, then count bits (LSB first): 1 where a
//          position's value differs from the one before (a new group of equal values).
//   block: count × u32 ends of each city's bytes (from the data's start), then the cities' JSON;
//          under COMPACT_MAGIC, the cities compact (compact-cities.ts): a fine block's, on a host
//          that reads files whole. A reader that knows only MAGIC refuses such a block.

const MAGIC = [0x43, 0x41, 0x45, 0x32]; // "CAE2"
const COMPACT_MAGIC = [0x43, 0x41, 0x45, 0x43]; // "CAEC"
const HEADER = 16;
/** The bytes of a file's header (magic, tag, count). */
export const HEADER_BYTES = HEADER;
export const TAG_BYTES = 8;

/** Edge files of two builds met (deployed while the function ran, or deployed apart): a reader starts again from the index. */
export class MixedBuilds extends CitiesApiError {}

export interface RankFile {
  /** Dataset positions in ascending order, ties by id ascending. */
  readonly order: Uint32Array;
  /** Bit i set: order[i] starts a group of equal values. */
  readonly groupStarts: Uint8Array;
}

export interface BlockFile {
  readonly count: number;
  /** The bytes held: the file's, or the ranges' read of it. */
  readonly bytes: number;
  /**
   * The serialized city at an index of the block: a view of the block, or a compact city expanded
   * into a scratch array that the next city expanded overwrites (copy it before asking for another).
   */
  city(i: number): Uint8Array;
}

export function encodeRanks(order: Uint32Array, startsGroup: (i: number) => boolean, tag: Uint8Array): Uint8Array {
  const n = order.length;
  const out = withHeader(4 * n + Math.ceil(n / 8), n, tag);
  const view = new DataView(out.buffer);
  for (let i = 0; i < n; i++) {
    view.setUint32(HEADER + 4 * i, order[i]!, true);
    if (startsGroup(i)) out[HEADER + 4 * n + (i >> 3)]! |= 1 << (i & 7);
  }
  return out;
}

export function decodeRanks(bytes: Uint8Array, tag: Uint8Array, path: string): RankFile {
  const n = checkHeader(bytes, tag, path, (count) => 4 * count + Math.ceil(count / 8));
  if (isCompact(bytes)) throw corrupt(path, 'it is a block, not a rank file');
  return { order: readU32s(bytes, HEADER, n), groupStarts: bytes.subarray(HEADER + 4 * n) };
}

export function isGroupStart(groupStarts: Uint8Array, i: number): boolean {
  return ((groupStarts[i >> 3]! >> (i & 7)) & 1) === 1;
}

/**
 * A block file as parts to write one after the other: its header and city ends, then the cities
 * themselves (not copied); `compact`: the cities are compact ones (compact-cities.ts).
 */
export function blockParts(cities: readonly Uint8Array[], tag: Uint8Array, compact = false): Uint8Array[] {
  const head = withHeader(4 * cities.length, cities.length, tag, compact ? COMPACT_MAGIC : MAGIC);
  const view = new DataView(head.buffer);
  let end = 0;
  cities.forEach((city, i) => view.setUint32(HEADER + 4 * i, (end += city.length), true));
  return [head, ...cities];
}

export function decodeBlock(bytes: Uint8Array, tag: Uint8Array, path: string): BlockFile {
  const n = checkHeader(bytes, tag, path, (count) => 4 * count);
  const ends = readU32s(bytes, HEADER, n);
  const data = HEADER + 4 * n;
  if (n && data + ends[n - 1]! !== bytes.length) throw corrupt(path, 'its cities end elsewhere than the file');
  const city = isCompact(bytes)
    ? (i: number) =>
        expandCity(bytes, data + (i ? ends[i - 1]! : 0), data + ends[i]!) ??
        fail(corrupt(path, `its city ${i + 1} is not a compact city`))
    : (i: number) => bytes.subarray(data + (i ? ends[i - 1]! : 0), data + ends[i]!);
  return { count: n, bytes: bytes.length, city };
}

/** Whether a block's header (checked) says its cities are compact. */
export function isCompact(head: Uint8Array): boolean {
  return COMPACT_MAGIC.every((b, i) => head[i] === b);
}

function fail(error: Error): never {
  throw error;
}

/** The tag's bytes from its hex spelling (as the edge index writes it). */
export function tagBytes(hex: string): Uint8Array {
  if (!/^[0-9a-f]{16}$/.test(hex))
    throw new CitiesApiError(`invalid edge data tag "${hex}": expected ${TAG_BYTES * 2} lowercase hex digits`);
  return Uint8Array.from({ length: TAG_BYTES }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
}

function withHeader(body: number, count: number, tag: Uint8Array, magic = MAGIC): Uint8Array {
  const out = new Uint8Array(HEADER + body);
  out.set(magic, 0);
  out.set(tag, 4);
  new DataView(out.buffer).setUint32(12, count, true);
  return out;
}

/** The entry count of a file whose header is ours and of this build, and whose size fits it. */
function checkHeader(bytes: Uint8Array, tag: Uint8Array, path: string, bodyBytes: (count: number) => number): number {
  checkHead(bytes, tag, path);
  const count = new DataView(bytes.buffer, bytes.byteOffset, bytes.length).getUint32(12, true);
  if (bytes.length < HEADER + bodyBytes(count)) throw corrupt(path, 'it is shorter than its header says');
  return count;
}

/** Rejects a file whose first HEADER_BYTES (or more) are not an edge file's of the build tagged `tag`. */
export function checkHead(bytes: Uint8Array, tag: Uint8Array, path: string): void {
  if (bytes.length < HEADER || (MAGIC.some((b, i) => bytes[i] !== b) && !isCompact(bytes)))
    throw corrupt(path, 'it is not an edge data file');
  if (tag.some((b, i) => bytes[4 + i] !== b)) {
    throw new MixedBuilds(
      `${path} is from another build than the edge index (its data tag differs): deploy the site's files of one build together`,
    );
  }
}

function corrupt(path: string, why: string): CitiesApiError {
  return new CitiesApiError(`${path} cannot be read: ${why}; rebuild the site and deploy its files again`);
}

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** `n` little-endian u32 at `offset`: a view when aligned on a little-endian machine, else a copy. */
export function readU32s(bytes: Uint8Array, offset: number, n: number): Uint32Array {
  const at = bytes.byteOffset + offset;
  if (LITTLE_ENDIAN && at % 4 === 0) return new Uint32Array(bytes.buffer, at, n);
  const view = new DataView(bytes.buffer, at, 4 * n);
  return Uint32Array.from({ length: n }, (_, i) => view.getUint32(4 * i, true));
}
