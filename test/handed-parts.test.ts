import { describe, expect, it } from 'vitest';
import { readable } from '../src/http/body-sink.js';
import { edgeSite } from '../src/http/edge-site.js';
import { createFetchHandler } from '../src/http/fetch-handler.js';
import { HandedParts } from '../src/http/handed-parts.js';
import { manyPartsSite } from './edge-helpers.js';

// A streamed body whose reader is the platform server's native one (Deno's, which hands each part
// it reads to Rust before it reads the next): the parts it has passed are let go (detached), their
// bytes freed once sent, not when V8 next collects (issue #25: Deno's memory with V8's defaults).
// A part is let go only once the reader has taken a later one, never one it may still be taking,
// one still queued, one of another's array, nor any part of a reader not recognised (a tee, a
// Response read whole in JavaScript: they keep what they read). Detaching itself is Deno's (V8's
// ArrayBuffer transfer, which Node 20 lacks): here it is recorded; under deno serve, edge-deno.

const BASE = 'http://api.example.com';
const COUNT = 6000;
const { files, spec, expected } = manyPartsSite(BASE, COUNT);
const QUERY = `ordering=-name_ar&page_size=${COUNT}`;

/** A reader as Deno's server reads: part by part, each copied as it is taken (Rust's own reference), recognised while it reads. */
async function nativeRead(stream: ReadableStream<Uint8Array>, reading: { now: boolean }) {
  const reader = stream.getReader();
  const taken: Uint8Array[] = [];
  for (;;) {
    reading.now = true;
    const read = reader.read();
    reading.now = false;
    const { done, value } = await read;
    if (done) return Buffer.concat(taken);
    taken.push(value.slice());
  }
}

/** A reader recognised from its pull `n` on. */
function recognisedFrom(n: number): () => boolean {
  let pulls = 0;
  return () => ++pulls >= n;
}

describe("a body's parts let go as the platform's native reader passes them", () => {
  it.each([
    ['recognised', true],
    ['never recognised', false],
  ] as const)('through the fetch handler, a reader %s: answerListing’s bytes, in many parts', async (_, recognised) => {
    const reading = { now: false };
    const handle = createFetchHandler({
      site: edgeSite(spec, files.read),
      nativeReader: () => recognised && reading.now,
    });
    const response = await handle(new Request(`${BASE}/cities/?${QUERY}`));
    const got = await nativeRead(response.body!, reading);
    expect(got.equals(expected(QUERY))).toBe(true);
    expect(got.length).toBeGreaterThan(20 * 65536);
  });

  it.each<[string, number[], number[]]>([
    // Each pull comes as the reader takes a part (one queued): parts before the one taken last are let go.
    ['a read at a time, one part queued', [1, 1, 1, 1, 1, 1], [0, 0, 0, 1, 2, 3]],
    // A pull with none queued (the part just taken may still be on its way): one more kept.
    ['nothing queued', [0, 0, 0, 0], [0, 0, 1, 2]],
  ])('which parts, %s', (_, queued, letGoBefore) => {
    const letGo: number[] = [];
    const parts = Array.from({ length: queued.length }, (_, i) => Uint8Array.of(i));
    const handed = new HandedParts(
      () => true,
      () => true,
      (part) => letGo.push(part[0]!),
    );
    const counts = queued.map((q, i) => {
      handed.pulled(q);
      const count = letGo.length;
      handed.handed(parts[i]!);
      return count;
    });
    expect(counts).toEqual(letGoBefore);
    expect(letGo).toEqual([...letGo].sort((a, b) => a - b));
  });

  it.each<[string, (part: Uint8Array) => boolean, () => boolean, number]>([
    ["parts of another's array", () => false, () => true, 0],
    // Parts 0 and 1 may have been another reader's (a JavaScript read before the body was handed on).
    ['a reader recognised at its third pull: the parts before it never let go', () => true, recognisedFrom(3), 5],
    ['a reader never recognised', () => true, () => false, 0],
  ])('%s', (_, owns, native, most) => {
    const letGo: Uint8Array[] = [];
    const handed = new HandedParts(native, owns, (part) => letGo.push(part));
    for (let i = 0; i < 10; i++) {
      handed.pulled(1);
      handed.handed(Uint8Array.of(i));
    }
    expect(letGo.length).toBe(most);
  });

  it('a stream read whole in JavaScript (no native reader) keeps every part it read', async () => {
    const parts = Array.from({ length: 12 }, (_, i) => new Uint8Array(1000).fill(i));
    const letGo: Uint8Array[] = [];
    const handed = new HandedParts(
      () => false,
      () => true,
      (part) => letGo.push(part),
    );
    const bytes = Buffer.from(await new Response(readable(parts[Symbol.iterator](), handed)).arrayBuffer());
    expect(bytes.equals(Buffer.concat(parts))).toBe(true);
    expect(letGo).toEqual([]);
  });
});
