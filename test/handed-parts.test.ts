import { describe, expect, it } from 'vitest';
import { readable } from '../src/http/body-sink.js';
import { edgeSite } from '../src/http/edge-site.js';
import { createFetchHandler } from '../src/http/fetch-handler.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HandedParts } from '../src/http/handed-parts.js';
import { netlifyEdgeFunction } from '../src/platforms/netlify/adapter.js';
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

  // Netlify's Edge Functions run on Deno: where Deno's server reads the function's answer itself,
  // its parts are let go as Deno's are (the function re-wraps the answer for Netlify's CDN, the
  // same stream). Detaching recorded through ArrayBuffer's transfer (Node 20 has none: one is lent).
  it.each([
    ['recognised', true],
    ['never recognised', false],
  ] as const)(
    "through Netlify's edge function, a reader %s: answerListing’s bytes, the parts it passed let go",
    async (_, recognised) => {
      const server = createServer((req, res) => {
        const bytes = files.files.get(decodeURIComponent(new URL(req.url!, BASE).pathname.slice(1)));
        res.writeHead(bytes ? 200 : 404).end(bytes);
      });
      await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const letGo: ArrayBuffer[] = [];
      const prototype = ArrayBuffer.prototype as ArrayBuffer & { transfer?: unknown };
      const own = Object.getOwnPropertyDescriptor(prototype, 'transfer');
      Object.defineProperty(prototype, 'transfer', {
        configurable: true,
        value(this: ArrayBuffer) {
          letGo.push(this);
          return structuredClone(this, { transfer: [this] });
        },
      });
      try {
        const reading = { now: false };
        // No file covers the query (none precomputed but the default ordering's): the function computes it.
        const settings = { ...spec, baseUrl: origin, orderings: ['default'], pageSizes: [100] };
        const handle = netlifyEdgeFunction(
          { settings },
          // The body read by nativeRead alone, from its first pull on.
          { nativeReader: () => recognised },
        );
        const next = () => Promise.reject(new Error('no file covers this query'));
        const response = await handle(new Request(`${origin}/cities/?${QUERY}`), { next });
        const got = await nativeRead(response.body!, reading);
        expect(got.equals(Buffer.from(expected(QUERY).toString().replaceAll(BASE, origin)))).toBe(true);
        // 6,000 cities in 64 KiB parts: each let go once a later one is taken (all but the last).
        expect(got.length).toBeGreaterThan(20 * 65536);
        const parts = Math.ceil(got.length / 65536);
        expect(letGo.length).toBe(recognised ? parts - 1 : 0);
        expect(letGo.every((buffer) => buffer.byteLength === 0)).toBe(true);
      } finally {
        if (own) Object.defineProperty(prototype, 'transfer', own);
        else delete prototype.transfer;
        server.close();
      }
    },
  );

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
