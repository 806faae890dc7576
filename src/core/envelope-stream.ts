import { utf8, type Bytes } from './bytes.js';
import { COMMA, TAIL } from './json-text.js';

// A page's JSON (envelopeJson's bytes) streamed from cities arriving in batches, in parts of one size.

/** The size of each part envelopeStream yields (but the last): a page of any size is sent in these. */
export const STREAM_PART_BYTES = 64 * 1024;

/**
 * envelopeJson's bytes from cities arriving in batches (a page read from an edge function's
 * files), in parts of STREAM_PART_BYTES filled as the cities come: a page of any size is never
 * held whole, and it costs its bytes in small parts, not one buffer per batch (a batch is a
 * block's run of the page: ~240 KB each, 68 MB of them for every city at 140k).
 */
export async function* envelopeStream(
  head: string,
  batches: AsyncIterable<readonly Bytes[]>,
  partBytes = STREAM_PART_BYTES,
): AsyncGenerator<Bytes> {
  const parts = new PartWriter(partBytes);
  const full: Bytes[] = [];
  parts.put(utf8(head), full);
  let first = true;
  for await (const batch of batches) {
    for (const city of batch) {
      if (!first) parts.put(COMMA, full);
      first = false;
      parts.put(city, full);
    }
    // The parts this batch filled, handed on before the next batch is read.
    yield* full.splice(0);
  }
  parts.put(TAIL, full);
  yield* full;
  yield parts.rest();
}

/** Bytes copied into parts of a fixed size: each part, once full, handed out and never written again. */
class PartWriter {
  private out: Bytes;
  private at = 0;

  constructor(private readonly size: number) {
    this.out = new Uint8Array(size);
  }

  /** Copies `bytes` in, pushing each part it fills onto `full`. */
  put(bytes: Bytes, full: Bytes[]): void {
    if (this.at + bytes.length < this.size) {
      this.out.set(bytes, this.at);
      this.at += bytes.length;
      return;
    }
    for (let from = 0; from < bytes.length; ) {
      const n = Math.min(bytes.length - from, this.size - this.at);
      this.out.set(bytes.subarray(from, from + n), this.at);
      [this.at, from] = [this.at + n, from + n];
      if (this.at === this.size) {
        full.push(this.out);
        [this.out, this.at] = [new Uint8Array(this.size), 0];
      }
    }
  }

  /** The last part's bytes (the writer is done). */
  rest(): Bytes {
    return this.out.subarray(0, this.at);
  }
}
