import type { Bytes } from '../core/bytes.js';
import type { PartPool } from '../core/envelope-stream.js';
import { putCopy, keptWhileSent, type PlatformCache } from './edge-cache.js';
import { HandedParts, type NativeReader } from './handed-parts.js';
import type { HeaderFields } from './route-types.js';

// A streamed answer's body sent: as a web ReadableStream pulled part by part (its parts then new
// arrays each, which the runtime's GC collects when it runs), or through a platform's sink that
// says when each part's bytes are taken, so that its array is written again: a page of any size
// then costs a few parts' arrays. Where the answer is kept, a copy goes to the platform's cache,
// written in step with the client's.

/** One copy of a body written through a sink: what the platform reads, and how to stop writing to it. */
export interface SinkCopy {
  readonly readable: ReadableStream<Bytes>;
  /** Writes to this copy no more (its reader is gone: a cache put that ended); the others go on. */
  stop(): void;
}

/** A platform's way to send a body written part by part, each write settling once its reader has taken the bytes. */
export interface BodySink {
  /**
   * `count` copies fed from `parts` in step: each part is written to every copy still read, and
   * given to `sent` once all of them have taken its bytes; once none is read, `parts` is read no
   * further. `background` keeps the writing going past the answer.
   */
  copies(
    parts: AsyncIterator<Bytes>,
    count: number,
    sent: (part: Bytes) => void,
    background: (work: Promise<unknown>) => void,
  ): SinkCopy[];
}

/** An answer whose body is streamed: its parts (null for HEAD), written into `pool`'s arrays where a sink gives them back. */
export interface StreamedAnswer {
  readonly status: number;
  readonly headers: HeaderFields;
  readonly parts: AsyncIterator<Bytes> | null;
  readonly pool: PartPool | undefined;
}

/** Where a computed answer is kept: the platform's cache, under the answer's key. */
export interface Kept {
  readonly key: Request;
  readonly cache: PlatformCache;
}

/**
 * The answer as a Response, through `sink` where the platform has one; kept while it is sent where
 * `kept` says; its pool's parts let go as `native` reader passes them, where the platform has one.
 */
export function streamedResponse(
  answer: StreamedAnswer,
  sink: BodySink | undefined,
  kept: Kept | undefined,
  background: (work: Promise<unknown>) => void,
  native?: NativeReader,
): Response {
  const { status, headers, parts, pool } = answer;
  if (!parts) return new Response(null, { status, headers });
  if (!sink) {
    const handed = native && pool && new HandedParts(native, (part) => pool.owns(part));
    const response = new Response(readable(parts, handed), { status, headers });
    return kept ? keptWhileSent(response, kept.key, kept.cache, background) : response;
  }
  const [client, stored] = sink.copies(parts, kept ? 2 : 1, (part) => pool?.give(part), background);
  if (kept && stored) putCopy(stored.readable, status, headers, kept.key, kept.cache, background, stored.stop);
  return new Response(client!.readable, { status, headers });
}

/**
 * Parts as a byte stream, each produced (or read) when the client is ready for it; a cancelled
 * stream stops its source. `handed`: the parts let go as a native reader passes them (handed-parts.ts).
 */
export function readable(
  iterator: Iterator<Bytes> | AsyncIterator<Bytes>,
  handed?: HandedParts,
): ReadableStream<Bytes> {
  return new ReadableStream<Bytes>(
    {
      async pull(controller) {
        // One part queued at most (the high-water mark): 1 - desiredSize of them are.
        handed?.pulled(1 - (controller.desiredSize ?? 1));
        const next = await iterator.next();
        if (next.done) {
          handed?.ended();
          controller.close();
        } else {
          handed?.handed(next.value);
          controller.enqueue(next.value);
        }
      },
      async cancel() {
        handed?.ended();
        await iterator.return?.();
      },
    },
    { highWaterMark: 1 },
  );
}
