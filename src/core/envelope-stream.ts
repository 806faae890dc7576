import { utf8, type Bytes } from './bytes.js';
import { COMMA, TAIL } from './page-assembly.js';

// A page's JSON (envelopeJson's bytes) streamed from cities arriving in batches, in parts of one
// size, each written into an array its PartSource gives: a new one, or (a PartPool) one a consumer
// gave back once it had sent its bytes.

/** The size of each part envelopeStream yields (but the last): a page of any size is sent in these. */
export const STREAM_PART_BYTES = 64 * 1024;

/** Where a stream's parts are written: arrays of partBytes. */
export interface PartSource {
  readonly partBytes: number;
  take(): Bytes;
}

/**
 * A new array for every part: a consumer that cannot tell when it is done with a part (a pulled
 * ReadableStream) owns it. The runtime's GC collects them when it runs: V8 let up to 64 MB of them
 * pile up (Deno 2.9), 32 MB (Node 20), over one answer of every city at 140k cities (70 MB).
 */
export const NEW_PARTS: PartSource = { partBytes: STREAM_PART_BYTES, take: () => new Uint8Array(STREAM_PART_BYTES) };

/**
 * Parts' arrays used again. A part handed out belongs to its consumer: it is written again only
 * once given back, and only a consumer that knows its bytes are taken gives it back (a platform's
 * pipe whose write settles once its reader has copied them: http/pipe-sink.ts).
 */
export class PartPool implements PartSource {
  private readonly free: Bytes[] = [];
  private readonly made = new WeakSet<ArrayBufferLike>();
  private count = 0;

  constructor(readonly partBytes = STREAM_PART_BYTES) {}

  /** A free array of partBytes, else a new one. */
  take(): Bytes {
    const part = this.free.pop();
    if (part) return part;
    this.count++;
    const made = new Uint8Array(this.partBytes);
    this.made.add(made.buffer);
    return made;
  }

  /** Arrays made so far. */
  get created(): number {
    return this.count;
  }

  /** Whether `part` views an array this pool made (not bytes of another's). */
  owns(part: Bytes): boolean {
    return this.made.has(part.buffer);
  }

  /** The array `part` views, free again: its consumer has sent its bytes and holds it no more. Others are ignored. */
  give(part: Bytes): void {
    const { buffer } = part;
    if (!this.made.has(buffer) || this.free.some((free) => free.buffer === buffer)) return;
    this.free.push(new Uint8Array(buffer, 0, this.partBytes));
  }
}

/**
 * Cities arriving together (a block's run of a page, a window gathered from several blocks): city
 * k's bytes asked for when they are copied (a view made then, of the array the city lies in, and
 * let go at once), so that a batch is not an array of a view per city that lives while its parts
 * are sent.
 */
export interface CityBatch {
  readonly length: number;
  at(k: number): Bytes;
}

/**
 * envelopeJson's bytes from cities arriving in batches (a page read from an edge function's
 * files), in parts of STREAM_PART_BYTES filled as the cities come: a page of any size is never
 * held whole, and it costs its bytes in small parts, not one buffer per batch (a batch is a
 * block's run of the page: ~240 KB each, 68 MB of them for every city at 140k).
 */
export async function* envelopeStream(
  head: string,
  batches: AsyncIterable<CityBatch>,
  pool: PartSource = NEW_PARTS,
): AsyncGenerator<Bytes> {
  const parts = new PartWriter(pool);
  const full: Bytes[] = [];
  parts.put(utf8(head), full);
  let first = true;
  for await (const batch of batches) {
    for (let k = 0; k < batch.length; k++) {
      if (!first) parts.put(COMMA, full);
      first = false;
      parts.put(batch.at(k), full);
    }
    // The parts this batch filled, handed on before the next batch is read.
    yield* full.splice(0);
  }
  parts.put(TAIL, full);
  yield* full;
  yield parts.rest();
}

/** Bytes copied into parts of a fixed size: each part, once full, handed out and written again only once its consumer gives it back to the pool. */
class PartWriter {
  private out: Bytes;
  private at = 0;
  private readonly size: number;

  constructor(private readonly pool: PartSource) {
    this.out = pool.take();
    this.size = pool.partBytes;
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
        [this.out, this.at] = [this.pool.take(), 0];
      }
    }
  }

  /** The last part's bytes (the writer is done). */
  rest(): Bytes {
    return this.out.subarray(0, this.at);
  }
}
