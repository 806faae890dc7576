import type { Bytes } from '../core/bytes.js';
import { MixedBuilds } from './edge-format.js';

// The async iterables an edge source streams a page through: its first batch read before the
// answer starts, and a failure on files of two builds told to the source.

/** The iterable with its first item already read (a failure to read it rejects here). */
export async function primed<T>(items: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = items[Symbol.asyncIterator]();
  let first: IteratorResult<T> | undefined = await iterator.next();
  // Handed out, the first item is let go: kept here, its block stayed alive for the whole page.
  const taken = (): T => {
    const { value } = first as IteratorYieldResult<T>;
    first = undefined;
    return value;
  };
  return {
    async *[Symbol.asyncIterator]() {
      if (!first || first.done) return;
      yield taken();
      try {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
      } finally {
        await iterator.return?.();
      }
    },
  };
}

export async function* once(bytes: Bytes): AsyncGenerator<Bytes> {
  yield bytes;
}

/** A stream that, failing on files of two builds, has its source read the index again. */
export async function* resetOnMixed(parts: AsyncIterable<Bytes>, reset: () => void): AsyncGenerator<Bytes> {
  try {
    yield* parts;
  } catch (error) {
    if (error instanceof MixedBuilds) reset();
    throw error;
  }
}
