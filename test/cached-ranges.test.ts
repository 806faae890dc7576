import { describe, expect, it } from 'vitest';
import type { PlatformCache } from '../src/http/edge-cache.js';
import { cachedRanges } from '../src/platforms/cloudflare/cached-ranges.js';
import { RangeIgnored } from '../src/site/edge-ranges.js';

// Cloudflare: a block's ranges through the zone's cache, since the assets binding sends whole
// files. The cache here answers a Range as Cloudflare's Cache API documents it (a 206); the
// Worker on workerd, with miniflare's cache, is tested in edge-cache.test.ts.

const FILES: Record<string, Uint8Array> = {
  'rows/a.bin': Uint8Array.from({ length: 1000 }, (_, i) => i % 251),
  'rows/b.bin': Uint8Array.from({ length: 500 }, (_, i) => (i * 7) % 251),
};

/** A cache keyed by URL that answers a Range with a 206 (`keeps: false`: one that stores nothing, as on workers.dev). */
function zoneCache({ keeps = true, ranges = true, failPut = false, refuses = false } = {}) {
  const entries = new Map<string, Uint8Array>();
  const counts = { puts: 0, hits: 0 };
  const cache: PlatformCache = {
    async match(request) {
      if (refuses) throw new Error('Too many API requests by single Worker invocation.');
      const bytes = entries.get(request.url);
      if (!bytes) return undefined;
      counts.hits++;
      const [, s, e] = /^bytes=(\d+)-(\d+)$/.exec(request.headers.get('range') ?? '') ?? [];
      if (!ranges || s === undefined) return new Response(bytes);
      const [start, end] = [Number(s), Math.min(Number(e) + 1, bytes.length)];
      const headers = { 'content-range': `bytes ${start}-${end - 1}/${bytes.length}` };
      return new Response(bytes.slice(start, end), { status: 206, headers });
    },
    async put(request, response) {
      counts.puts++;
      if (failPut) throw new Error('put failed');
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (keeps) entries.set(request.url, bytes);
    },
  };
  return { cache, counts };
}

function setup(options: Parameters<typeof zoneCache>[0] = {}, tag = 'tag1') {
  const reads: string[] = [];
  const { cache, counts } = zoneCache(options);
  let current = tag;
  const read = cachedRanges(
    async (path) => {
      reads.push(path);
      return FILES[path]!;
    },
    cache,
    () => 'https://cities.example.org',
    async () => current,
  );
  return { read, reads, counts, retag: (t: string) => (current = t) };
}
const bytes = (path: string, start: number, end: number) => [...FILES[path]!.subarray(start, end)];

describe('cachedRanges: ranges of edge blocks through the zone cache', () => {
  type Steps = (s: ReturnType<typeof setup>) => Promise<Uint8Array>;
  it.each<[string, Steps, [string, number, number], { reads: number; puts: number }]>([
    [
      'a block first asked: read whole from the assets once, put in the cache, the range cut from it',
      ({ read }) => read('rows/a.bin', 10, 20),
      ['rows/a.bin', 10, 20],
      { reads: 1, puts: 1 },
    ],
    [
      'its next ranges come from the cache: the assets are not read again',
      async ({ read }) => {
        await read('rows/a.bin', 10, 20);
        return read('rows/a.bin', 500, 510);
      },
      ['rows/a.bin', 500, 510],
      { reads: 1, puts: 1 },
    ],
    [
      'two first reads of one block at once: one read of the assets',
      async ({ read }) => {
        const [, second] = await Promise.all([read('rows/a.bin', 0, 5), read('rows/a.bin', 500, 510)]);
        return second;
      },
      ['rows/a.bin', 500, 510],
      { reads: 1, puts: 1 },
    ],
    [
      'another block: its own entry',
      async ({ read }) => {
        await read('rows/a.bin', 500, 510);
        return read('rows/b.bin', 100, 110);
      },
      ['rows/b.bin', 100, 110],
      { reads: 2, puts: 2 },
    ],
    [
      'a new build (another tag): read and put again, never answered from the old build’s entry',
      async ({ read, retag }) => {
        await read('rows/a.bin', 500, 510);
        retag('tag2');
        return read('rows/a.bin', 500, 510);
      },
      ['rows/a.bin', 500, 510],
      { reads: 2, puts: 2 },
    ],
  ])('%s', async (_, steps, [path, start, end], expected) => {
    const s = setup();
    expect([...(await steps(s))]).toEqual(bytes(path, start, end));
    expect({ reads: s.reads.length, puts: s.counts.puts }).toEqual(expected);
  });

  it.each<[string, Parameters<typeof zoneCache>[0]]>([
    ['a cache that answers a range with the whole file (200): the range cut from it', { ranges: false }],
    ['a cache that refuses the put: the range still answered, from the block read whole', { failPut: true }],
    [
      "a cache that refuses every call (a plan's limit on Cache API calls per request): the range answered from the block read whole",
      { refuses: true },
    ],
  ])('%s', async (_, options) => {
    const { read } = setup(options);
    expect([...(await read('rows/a.bin', 10, 20))]).toEqual(bytes('rows/a.bin', 10, 20));
    expect([...(await read('rows/a.bin', 700, 733))]).toEqual(bytes('rows/a.bin', 700, 733));
  });

  it('a cache that keeps nothing (workers.dev): once a block put is missing, RangeIgnored with the whole block (the reader reads whole blocks from then on)', async () => {
    const { read, reads } = setup({ keeps: false });
    expect([...(await read('rows/a.bin', 10, 20))]).toEqual(bytes('rows/a.bin', 10, 20));
    const whole = await read('rows/a.bin', 30, 40).catch((error: unknown) => error);
    expect(whole).toBeInstanceOf(RangeIgnored);
    expect([...(whole as RangeIgnored).file]).toEqual(bytes('rows/a.bin', 0, 1000));
    expect(reads).toEqual(['rows/a.bin', 'rows/a.bin']);
  });
});
