import type { Into } from '../site/byte-pool.js';

// A response body read into arrays a reader gives (a scan's pool: site/byte-pool.ts). Where the
// body is a byte stream (workerd's and Deno's fetch bodies, the Cloudflare assets binding's), it
// is read with a BYOB reader: the runtime writes straight into the array's memory, and no array
// is made per chunk. Any other body is read chunk by chunk, each chunk a new array of the
// runtime's, collected by its GC when it runs (a page of every city at 140k reads 70 MB of
// blocks). A BYOB read transfers the array it is given: the bytes come back in a new ArrayBuffer
// over the same memory, and the array passed in is detached (its length 0). A body longer than
// said (a Content-Length that counts an encoded body), or of no said length (wrangler dev's
// assets send none), goes on into larger arrays.

/** The body read into `into(length)` where its length is said, else into `into(0)` (any array), larger ones as it grows. */
export async function bodyInto(body: ReadableStream<Uint8Array>, into: Into, length?: number): Promise<Uint8Array> {
  const target = length === undefined ? into(0) : into(length).subarray(0, length);
  let reader: ReadableStreamBYOBReader;
  try {
    reader = body.getReader({ mode: 'byob' });
  } catch {
    // Not a byte stream.
    return chunksInto(body.getReader(), target, into);
  }
  let [bytes, filled] = [target, 0];
  for (;;) {
    if (filled === bytes.length) {
      // Full: one byte more tells whether the body goes on.
      const probe = await reader.read(new Uint8Array(1));
      if (probe.done) return bytes;
      bytes = larger(bytes, filled, into, probe.value);
      filled += probe.value.length;
      continue;
    }
    // Where the array lies in its ArrayBuffer, before the read detaches it.
    const [start, size] = [bytes.byteOffset, bytes.length];
    const { value, done } = await reader.read(bytes.subarray(filled));
    // Cancelled under the read: the array it was given is gone with it.
    if (!value || value.buffer.byteLength < start + size) throw new Error('the body was cancelled while it was read');
    // The memory, transferred: the same bytes in a new ArrayBuffer (also when done, where workerd's view is empty at 0).
    bytes = new Uint8Array(value.buffer, start, size);
    if (done) return bytes.subarray(0, filled);
    filled += value.length;
  }
}

/** The body read chunk by chunk, each copied in after the bytes `bytes` holds, into larger arrays where it does not fit. */
async function chunksInto(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  target: Uint8Array,
  into: Into,
): Promise<Uint8Array> {
  let [bytes, filled] = [target, 0];
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    const chunk = next.value;
    if (filled + chunk.length > bytes.length) bytes = larger(bytes, filled, into, chunk);
    else bytes.set(chunk, filled);
    filled += chunk.length;
  }
  return bytes.subarray(0, filled);
}

/** A larger array from `into` holding the `filled` bytes of `bytes`, then `chunk`. */
function larger(bytes: Uint8Array, filled: number, into: Into, chunk: Uint8Array): Uint8Array {
  const out = into(Math.max(2 * bytes.length, filled + chunk.length));
  out.set(bytes.subarray(0, filled));
  out.set(chunk, filled);
  return out;
}
