// UTF-8 bytes without Node's global Buffer, so the pure layers run on any web-standard runtime
// (workerd, Deno, edge runtimes). Node's Buffer is a Uint8Array: callers on Node lose nothing.

const encoder = new TextEncoder();
// ignoreBOM: a leading U+FEFF is text (a name may start with one), never stripped.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

export type Bytes = Uint8Array;

export function utf8(text: string): Bytes {
  return encoder.encode(text);
}

/** The text of bytes [start, end) read as UTF-8 (invalid sequences become U+FFFD). */
export function fromUtf8(bytes: Bytes, start = 0, end = bytes.length): string {
  return decoder.decode(bytes.subarray(start, end));
}

/** The UTF-8 length of a text, without encoding it. */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
      i++;
    } else n += 2;
  }
  return n;
}

/** Writes `text` as UTF-8 into `out` at `at`; returns the bytes written (out must have room). */
export function writeUtf8(text: string, out: Bytes, at: number): number {
  // At 0 into `out` itself: no view made (every computed page writes its head there).
  return encoder.encodeInto(text, at === 0 ? out : out.subarray(at)).written;
}

const SLAB_BYTES = 64 * 1024;
const SLAB_MAX = 8 * 1024;
let slab = new ArrayBuffer(0);
let slabAt = 0;
/**
 * The slab's last array and where it begins: releaseBytes and allocatedOffset know it by identity
 * (reading a view's `byteOffset` or `buffer` in optimized code went through V8's generic load).
 */
let lastOut: Bytes | undefined;
let lastAt = 0;

/**
 * `size` bytes for the caller to fill entirely. Small arrays are views carved from a shared slab
 * (as Node's Buffer.allocUnsafe carves its pool): one allocation serves many answers, where one
 * `new Uint8Array` each costs more than filling it. Never pass `.buffer` of one on: it is shared.
 */
export function allocBytes(size: number): Bytes {
  if (size > SLAB_MAX) return new Uint8Array(size);
  if (slabAt + size > slab.byteLength) [slab, slabAt] = [new ArrayBuffer(SLAB_BYTES), 0];
  const out = new Uint8Array(slab, slabAt, size);
  lastOut = out;
  lastAt = slabAt;
  slabAt = (slabAt + size + 7) & ~7;
  return out;
}

/** Where an array allocBytes() made begins in its buffer: for its last, known without asking the view. */
export function allocatedOffset(bytes: Bytes): number {
  return bytes === lastOut ? lastAt : bytes.byteOffset;
}

/**
 * Gives back an array allocBytes() made, once nothing will read it again (its bytes were handed to
 * the kernel, nothing keeps it): when it is the slab's last, the next arrays reuse its memory, which
 * is already in the process's pages (a new slab's is not: about 1 µs a page to fault in, and garbage
 * the collector counts). Any other array is left alone.
 */
export function releaseBytes(bytes: Bytes): void {
  if (bytes !== lastOut) return;
  lastOut = undefined;
  slabAt = lastAt;
}

/** The parts joined into one array (`total`: their summed length, when already known). */
export function concatBytes(parts: readonly Bytes[], total?: number): Bytes {
  if (parts.length === 1 && (total === undefined || total === parts[0]!.length)) return parts[0]!;
  let size = total ?? 0;
  if (total === undefined) for (const part of parts) size += part.length;
  const out = allocBytes(size);
  // Last part first: each may overwrite up to 7 bytes before its place (setBytesBefore), the parts before it's.
  let at = size;
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!;
    setBytesBefore(out, part, (at -= part.length), part.length >= WORTH_ALIGNING && inSharedMemory(part));
  }
  return out;
}

const SHARED = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer : undefined;
/** Shorter arrays are copied as they are: asking an array for its buffer (a call into V8's C++) costs more than they save. */
const WORTH_ALIGNING = 64;

/** Whether `bytes` lie in a SharedArrayBuffer. */
export function inSharedMemory(bytes: Bytes): boolean {
  return SHARED !== undefined && bytes.buffer instanceof SHARED;
}

/**
 * `out.set(src, at)`, made fast when `shared` (`src` lies in shared memory, a site's dataset:
 * http/site-data.ts; `out` in ordinary memory, as allocBytes() makes it): V8 (Node 20) copies
 * from a SharedArrayBuffer 8 bytes at a time only where source and destination lie alike in their
 * 8-byte words, else byte by byte, 3-5 x slower (7 cities of a page at arbitrary offsets: 2.9-3.1 µs
 * against 0.8-1.6 µs this way). So `src` is copied to the nearest such place at or before `at`, then
 * moved to `at` within `out` (a plain memmove). It may then overwrite up to 7 bytes of `out` before
 * `at`: callers fill an array from its end to its start, writing those bytes afterwards.
 */
export function setBytesBefore(out: Bytes, src: Bytes, at: number, shared: boolean): void {
  setBytesAligned(out, out.byteOffset, src, src.byteOffset, at, shared);
}

/** setBytesBefore(), told where `out` and `src` begin in their buffers (a caller copying many knows without asking each array). */
export function setBytesAligned(
  out: Bytes,
  outOffset: number,
  src: Bytes,
  srcOffset: number,
  at: number,
  shared: boolean,
): void {
  const shift = shared ? (outOffset + at - srcOffset) & 7 : 0;
  if (shift === 0 || at < shift) return typedArrayCall.set(out, src, at);
  typedArrayCall.set(out, src, at - shift);
  typedArrayCall.copyWithin(out, at, at - shift, at - shift + src.length);
}

const { set, copyWithin } = Uint8Array.prototype;
/**
 * Uint8Array methods called as functions, not read from each array: in Node 20's V8 such a read
 * in optimized code went through the generic load IC, about 80 instructions each, two per city
 * of a computed page.
 */
export const typedArrayCall = {
  set: (out: Bytes, src: ArrayLike<number>, at: number): void => set.call(out, src, at),
  copyWithin: (out: Bytes, target: number, start: number, end: number): void => {
    copyWithin.call(out, target, start, end);
  },
};

/** Where `needle` first occurs in `bytes` from `from`, or -1. */
export function indexOfBytes(bytes: Bytes, needle: Bytes, from = 0): number {
  const first = needle[0]!;
  for (
    let i = bytes.indexOf(first, from);
    i >= 0 && i + needle.length <= bytes.length;
    i = bytes.indexOf(first, i + 1)
  ) {
    let k = 1;
    while (k < needle.length && bytes[i + k] === needle[k]) k++;
    if (k === needle.length) return i;
  }
  return -1;
}

const BASE64 = utf8('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
const EQUALS = 0x3d;

/** Bytes encoded at a time by toBase64 (a multiple of 3): its output array is this size's, reused. */
const BASE64_RUN = 3 * 16 * 1024;

/**
 * The bytes in base64 (RFC 4648, padded): web-standard, and fast on a page of megabytes, where
 * btoa over a binary string of them took 0.4-1 s for 2.6 MB (Node 20). Encoded a run at a time
 * into one small array, so that a page's base64 is held once, as the string.
 */
export function toBase64(bytes: Bytes): string {
  const out = new Uint8Array((4 * Math.min(bytes.length, BASE64_RUN)) / 3 + 4);
  const text: string[] = [];
  for (let from = 0; from < bytes.length; from += BASE64_RUN) {
    const end = Math.min(bytes.length, from + BASE64_RUN);
    let o = 0;
    let i = from;
    for (const whole = end - ((end - from) % 3); i < whole; i += 3) {
      const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
      out[o++] = BASE64[n >>> 18]!;
      out[o++] = BASE64[(n >>> 12) & 63]!;
      out[o++] = BASE64[(n >>> 6) & 63]!;
      out[o++] = BASE64[n & 63]!;
    }
    if (i < end) {
      const n = (bytes[i]! << 16) | ((i + 1 < end ? bytes[i + 1]! : 0) << 8);
      out[o++] = BASE64[n >>> 18]!;
      out[o++] = BASE64[(n >>> 12) & 63]!;
      out[o++] = i + 1 < end ? BASE64[(n >>> 6) & 63]! : EQUALS;
      out[o++] = EQUALS;
    }
    text.push(fromUtf8(out, 0, o));
  }
  return text.join('');
}
