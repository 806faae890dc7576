import type { Bytes } from '../core/bytes.js';
import type { BodySink, SinkCopy } from './body-sink.js';

// A body sink over a platform's pipe (workerd's IdentityTransformStream): the readable side is
// what the platform sends, and a write to the writable side settles only once the reader has
// copied all of its bytes out (workerd: "A write() promise will not be fulfilled until there is a
// corresponding read()"; the pipe moves the bytes into the reader's buffer, then settles the
// write). So once every copy's write of a part has settled, no one reads its array any more: it
// is given back and the page's next part is written into it. The platform's reader pumps the
// readable side natively, into its own buffers: no JavaScript array is made per part.

/** A pipe: bytes written to `writable` are read, unchanged, from `readable`. */
export interface Pipe {
  readonly readable: ReadableStream<Bytes>;
  readonly writable: WritableStream<Bytes>;
}

/** Whatever makes a new pipe (`new IdentityTransformStream()`). */
export type NewPipe = () => Pipe;

export function pipeSink(newPipe: NewPipe): BodySink {
  return {
    copies(parts, count, sent, background) {
      const pipes = Array.from({ length: count }, newPipe);
      const copies = pipes.map((pipe) => ({ writer: pipe.writable.getWriter(), stopped: signal() }));
      background(pump(parts, copies, sent));
      return pipes.map(({ readable }, i): SinkCopy => ({ readable, stop: () => copies[i]!.stopped.settle() }));
    },
  };
}

interface Copy {
  readonly writer: WritableStreamDefaultWriter<Bytes>;
  /** Settled by stop(): its reader is gone, its pending write (never to be read) no longer waited for. */
  readonly stopped: ReturnType<typeof signal>;
}

/** Each part written to every live copy, then handed to `sent`; a copy whose write fails or that is stopped is dropped. */
async function pump(parts: AsyncIterator<Bytes>, copies: Copy[], sent: (part: Bytes) => void): Promise<void> {
  let live = copies;
  try {
    for (let next = await parts.next(); !next.done; next = await parts.next()) {
      const part = next.value;
      const written = await Promise.all(
        live.map(({ writer, stopped }) =>
          Promise.race([writer.write(part).then(() => true), stopped.promise.then(() => false)]).catch(() => false),
        ),
      );
      live = live.filter((_, i) => written[i]);
      // No one reads any more (the client gone, the cache done): the page is read no further.
      if (!live.length) return;
      sent(part);
    }
    await Promise.all(live.map(({ writer }) => writer.close().catch(() => undefined)));
  } catch (error) {
    // The page failed midway (its files replaced, say): every copy ends in that error.
    await Promise.all(live.map(({ writer }) => writer.abort(error).catch(() => undefined)));
  } finally {
    // The page's files are let go; a failure there has no one left to tell.
    await parts.return?.()?.catch(() => undefined);
  }
}

function signal(): { promise: Promise<void>; settle: () => void } {
  let settle!: () => void;
  const promise = new Promise<void>((resolve) => (settle = resolve));
  return { promise, settle };
}
