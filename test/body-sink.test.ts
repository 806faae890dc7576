import { describe, expect, it } from 'vitest';
import { PartPool } from '../src/core/envelope-stream.js';
import type { PlatformCache } from '../src/http/edge-cache.js';
import { edgeSite } from '../src/http/edge-site.js';
import { createFetchHandler } from '../src/http/fetch-handler.js';
import { pipeSink, type Pipe } from '../src/http/pipe-sink.js';
import { manyPartsSite } from './edge-helpers.js';

// A streamed answer written through a platform's sink (the Worker's: workerd's
// IdentityTransformStream), which tells when each part's bytes are taken: the page's parts are
// written into a few arrays used again, not a new array per part left to the GC (issue #25:
// memory per request bounded at any page_size). The pipe here keeps workerd's contract, a write
// settles only once its reader has copied all of its bytes out, and copies them at the read, so
// that an array written again too early would change the bytes sent. On workerd itself the
// Worker's answers are compared byte for byte in edge-cloudflare and edge-cache.

const BASE = 'http://api.example.com';
const COUNT = 6000;
const { files, spec, expected } = manyPartsSite(BASE, COUNT);

/** Pipes made, and the arrays written into them (a view's buffer counted once). */
function pipes() {
  const arrays = new Set<ArrayBufferLike>();
  /** Per pipe made: whether a write waits for its reader. */
  const waiting: (() => boolean)[] = [];
  let writes = 0;
  const make = (): Pipe => {
    let pending: { bytes: Uint8Array; taken: () => void; refused: (error: Error) => void } | undefined;
    let wake: (() => void) | undefined;
    let [closed, gone] = [false, false];
    const writable = new WritableStream<Uint8Array>({
      write: (bytes) =>
        new Promise<void>((taken, refused) => {
          if (gone) return refused(new Error('reader canceled'));
          writes++;
          arrays.add(bytes.buffer);
          pending = { bytes, taken, refused };
          wake?.();
        }),
      close() {
        closed = true;
        wake?.();
      },
    });
    const readable = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          while (!pending && !closed) await new Promise<void>((resolve) => (wake = resolve));
          if (!pending) return controller.close();
          // A reader a tick late, as a network is: the bytes are copied only now.
          await new Promise((resolve) => setImmediate(resolve));
          const { bytes, taken } = pending;
          pending = undefined;
          controller.enqueue(bytes.slice());
          taken();
        },
        cancel() {
          gone = true;
          pending?.refused(new Error('reader canceled'));
        },
      },
      { highWaterMark: 0 },
    );
    waiting.push(() => pending !== undefined);
    return { readable, writable };
  };
  return {
    make,
    arrays,
    /** Whether every pipe's reader has taken what was written to it. */
    allTaken: () => !waiting.some((isWaiting) => isWaiting()),
    get writes() {
      return writes;
    },
  };
}

/** A Workers-like cache: `put` reads its body whole (or, `reads: false`, keeps nothing and reads nothing). */
function memoryCache(reads = true) {
  const kept = new Map<string, Buffer>();
  const cache: PlatformCache = {
    match: async () => undefined,
    put: async (key, response) => {
      if (reads) kept.set(key.url, Buffer.from(await response.arrayBuffer()));
    },
  };
  return { cache, kept };
}

function handler(made: ReturnType<typeof pipes>, cache?: PlatformCache) {
  const background: Promise<unknown>[] = [];
  const site = edgeSite(spec, files.read);
  const handle = createFetchHandler({ site, sink: pipeSink(made.make), cache });
  return {
    background,
    ask: (query: string) => handle(new Request(`${BASE}/cities/?${query}`), (work) => background.push(work)),
  };
}

const PAGES = [
  ['every city, the default ordering', `page_size=${COUNT}`],
  ['every city, a field descending', `ordering=-name_ar&page_size=${COUNT}`],
  ['a large multi-field page', 'ordering=name_en,-id&page_size=5000'],
] as const;

describe('through a sink whose writes settle once read, a page is written into a few arrays', () => {
  it.each(PAGES)("%s (%s): answerListing's bytes, however many parts", async (_, query) => {
    const made = pipes();
    const response = await handler(made).ask(query);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(expected(query))).toBe(true);
    // Before: a new array for every part (the sink unused).
    expect(made.writes).toBeGreaterThan(20);
    expect(made.arrays.size).toBeLessThanOrEqual(8);
  });

  it('kept in the cache while sent: both copies get every byte, in step, from the same few arrays', async () => {
    const made = pipes();
    const { cache, kept } = memoryCache();
    const { ask, background } = handler(made, cache);
    const query = `ordering=-name_ar&page_size=${COUNT}`;
    const response = await ask(query);
    expect(Buffer.from(await response.arrayBuffer()).equals(expected(query))).toBe(true);
    await Promise.all(background);
    expect([...kept.values()].map((bytes) => bytes.equals(expected(query)))).toEqual([true]);
    expect(made.writes).toBeGreaterThan(40);
    expect(made.arrays.size).toBeLessThanOrEqual(8);
  });

  it('a cache that keeps nothing (its put reads no byte): the client still gets the whole page', async () => {
    const made = pipes();
    const { ask, background } = handler(made, memoryCache(false).cache);
    const query = `page_size=${COUNT}`;
    const response = await ask(query);
    expect(Buffer.from(await response.arrayBuffer()).equals(expected(query))).toBe(true);
    await Promise.all(background);
  });

  it('a client gone after the first part: the page is read no further', async () => {
    const made = pipes();
    const { ask, background } = handler(made);
    const before = files.reads.length;
    const reader = (await ask(`page_size=${COUNT}`)).body!.getReader();
    await reader.read();
    await reader.cancel();
    await Promise.all(background);
    // The page spans ~20 blocks of the layout; a few were read ahead.
    expect(files.reads.length - before).toBeLessThan(10);
  });
});

describe('pipeSink gives a part back only once every copy has taken its bytes', () => {
  it.each([1, 2])('%i copies, read slowly', async (count) => {
    const made = pipes();
    const parts = Array.from({ length: 12 }, (_, i) => new Uint8Array(1000).fill(i));
    const given: boolean[] = [];
    const background: Promise<unknown>[] = [];
    const copies = pipeSink(made.make).copies(
      (async function* () {
        yield* parts;
      })(),
      count,
      () => given.push(made.allTaken()),
      (work) => background.push(work),
    );
    const read = async (stream: ReadableStream<Uint8Array>) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      return Buffer.concat(chunks);
    };
    const bodies = await Promise.all(copies.map(({ readable }) => read(readable)));
    await Promise.all(background);
    for (const body of bodies) expect(body.equals(Buffer.concat(parts))).toBe(true);
    // Before every part could be written again, each copy's reader had copied it out.
    expect(given).toEqual(parts.map(() => true));
  });
});

describe('PartPool: an array is written again only once given back, and only its own', () => {
  it.each([
    ['a part given back is taken again', (pool: PartPool, a: Uint8Array) => pool.give(a), 1],
    [
      'a view of a part (the last, shorter one) gives back its array',
      (pool: PartPool, a: Uint8Array) => pool.give(a.subarray(0, 3)),
      1,
    ],
    ['an array the pool did not make is not taken in', (pool: PartPool) => pool.give(new Uint8Array(16)), 2],
    ['nothing given back: a new array', () => undefined, 2],
  ])('%s', (_, give, made) => {
    const pool = new PartPool(16);
    const a = pool.take();
    give(pool, a);
    const b = pool.take();
    expect(pool.created).toBe(made);
    expect(b.length).toBe(16);
    expect(b.buffer === a.buffer).toBe(made === 1);
  });

  it('a part given back twice is handed out once', () => {
    const pool = new PartPool(16);
    const a = pool.take();
    pool.give(a);
    pool.give(a);
    expect(pool.take().buffer).toBe(a.buffer);
    expect(pool.take().buffer).not.toBe(a.buffer);
  });
});
