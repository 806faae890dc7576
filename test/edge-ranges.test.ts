import { describe, expect, it } from 'vitest';
import { utf8 } from '../src/core/bytes.js';
import { httpRange } from '../src/http/edge-site.js';
import { ByteLru } from '../src/site/byte-lru.js';
import { blockParts, MixedBuilds, tagBytes } from '../src/site/edge-format.js';
import {
  blockEnds,
  headBytes,
  partialBlock,
  RangeIgnored,
  rangesFor,
  readByRanges,
  wholeExtra,
} from '../src/site/edge-ranges.js';

const TAG = tagBytes('0011223344556677');
/** A block of cities of these JSON sizes (each `{"…"}`), as one file, and its city ends. */
function block(sizes: readonly number[]) {
  const cities = sizes.map((n, i) => utf8(`{"${String(i).padEnd(n - 4, 'x')}"}`));
  const file = Buffer.concat(blockParts(cities, TAG));
  return { cities, file, ends: blockEnds(file.subarray(0, headBytes(sizes.length)), sizes.length, TAG, 'b.bin') };
}
const own = (ends: Uint32Array, needed: number[]) => needed.reduce((n, i) => n + ends[i]! - (i ? ends[i - 1]! : 0), 0);
const span = (ranges: { start: number; end: number }[]) => ranges.reduce((n, r) => n + r.end - r.start, 0);

describe('rangesFor: the ranges read for a block’s needed cities', () => {
  it.each<[string, number[], number[], number, number]>([
    ['one city: one range, its own bytes', Array(40).fill(100), [7], 0, 1],
    ['neighbours: one range', Array(40).fill(100), [7, 8, 9], 0, 1],
    [
      '1 in 13 with no slack: one range each (a gap of 12 cities > 2 x a city)',
      Array(200).fill(100),
      [0, 13, 26, 39],
      0,
      4,
    ],
    ['1 in 13, slack for two gaps: the two merged', Array(200).fill(100), [0, 13, 26, 39], 2 * 1200, 2],
    ['1 in 2: every gap within 2 x the cities: one range', Array(40).fill(100), [0, 2, 4, 6, 8], 0, 1],
    ['the smallest gaps merged first', [100, 100, 100, 5000, 100, 100], [0, 2, 4], 0, 2],
  ])('%s', (_, sizes, needed, slack, count) => {
    const { ends } = block(sizes);
    const ranges = rangesFor(ends, needed, slack);
    expect(ranges.length).toBe(count);
    expect(span(ranges)).toBeLessThanOrEqual(3 * own(ends, needed) + slack);
    // Every needed city inside a range.
    for (const i of needed) {
      const [start, end] = [headBytes(sizes.length) + (i ? ends[i - 1]! : 0), headBytes(sizes.length) + ends[i]!];
      expect(ranges.some((r) => r.start <= start && end <= r.end)).toBe(true);
    }
  });
});

describe('wholeExtra: a block a page needs few cities of, read whole where that is cheaper than its ranges', () => {
  const scattered = (n: number, step: number) => Array.from({ length: n }, (_, k) => k * step);
  it.each<[string, number, number[], number, boolean, number, boolean]>([
    [
      'a fine block (40 cities of 100 B), 1 city, its head not kept: whole (2 reads -> 1)',
      40,
      [7],
      100,
      false,
      256_000,
      true,
    ],
    ['the same, its head kept: ranges (1 read either way, fewer bytes)', 40, [7], 100, true, 256_000, false],
    [
      '3 scattered cities of a block of 40 of 300 B (12 KB): whole (head and one merged range, 2 reads -> 1, for 11 KB more)',
      40,
      scattered(3, 13),
      300,
      false,
      256_000,
      true,
    ],
    [
      'a coarse block (450 of 530 B), 100 consecutive cities: ranges (one range: 2 reads -> 1 would read 180 KB more)',
      450,
      Array.from({ length: 100 }, (_, k) => 200 + k),
      530,
      false,
      256_000,
      false,
    ],
    ['a fine block, 5 scattered cities, the page’s slack spent: ranges', 40, scattered(5, 8), 100, false, 1_000, false],
    [
      'a coarse block, 100 cities 1 in 2: ranges (merged into one range: 2 reads -> 1 would read 120 KB more)',
      450,
      scattered(100, 2),
      530,
      false,
      256_000,
      false,
    ],
  ])('%s', (_, cities, needed, cityBytes, headKept, slack, whole) => {
    const extra = wholeExtra(cities, Uint32Array.from(needed), cityBytes, headKept, slack);
    expect(extra !== undefined).toBe(whole);
    if (extra !== undefined) expect(extra).toBeLessThanOrEqual(slack);
  });
});

describe('a block read by range', () => {
  const { cities, file, ends } = block(Array.from({ length: 50 }, (_, i) => 20 + ((i * 37) % 90)));
  const read = async (start: number, end: number) => file.subarray(start, end);

  it('answers its needed cities with their bytes, read concurrently', async () => {
    const needed = [3, 4, 17, 40, 49];
    const got = await readByRanges(read, 'b.bin', needed, 0, ends, 3);
    expect(needed.map((i) => Buffer.from(got.city(i)).toString())).toEqual(
      needed.map((i) => Buffer.from(cities[i]!).toString()),
    );
  });

  it.each<[string, (s: number, e: number) => Promise<Uint8Array>]>([
    ['a range shorter than asked (the file shrank since its head was read)', async (s, e) => file.subarray(s, e - 1)],
    ['a city that is not a JSON object (the file changed)', async (s, e) => Buffer.alloc(e - s, 0x20)],
  ])('%s: MixedBuilds', async (_, bad) => {
    const reading = readByRanges(bad, 'b.bin', [5], 0, ends, 1).then((b) => b.city(5));
    await expect(reading).rejects.toThrow(MixedBuilds);
  });

  it.each<[string, Uint8Array, number, RegExp]>([
    [
      'a head of another build',
      Buffer.concat(blockParts([utf8('{}')], tagBytes('ffffffffffffffff'))),
      1,
      /another build/,
    ],
    ['a head of another number of cities', file.subarray(0, headBytes(50)), 49, /holds 50 cities, not 49/],
  ])('blockEnds rejects %s', (_, head, count, message) => {
    expect(() => blockEnds(head.subarray(0, headBytes(count)), count, TAG, 'b.bin')).toThrow(message);
  });

  it('a city not read is an error, not another city', () => {
    const part = partialBlock(ends, [{ start: 0, end: 10 }], [file.subarray(0, 10)], 'b.bin');
    expect(() => part.city(30)).toThrow(/was not read/);
  });
});

describe('httpRange: part of an edge file over HTTP', () => {
  const file = Buffer.from('0123456789abcdef');
  it.each<[string, (r: Request) => Response, string | RegExp]>([
    [
      'a 206 with its Content-Range: its body',
      (r) => {
        const [, s, e] = /bytes=(\d+)-(\d+)/.exec(r.headers.get('range')!)!.map(Number);
        return new Response(file.subarray(s, e! + 1), {
          status: 206,
          headers: { 'content-range': `bytes ${s}-${e}/16` },
        });
      },
      '456',
    ],
    ['a 200 (the Range ignored): RangeIgnored, holding the whole file', () => new Response(file), 'whole 16'],
    [
      'a 206 of another range: rejected',
      () => new Response('0', { status: 206, headers: { 'content-range': 'bytes 0-0/16' } }),
      /HTTP 206/,
    ],
    ['a 404: rejected', () => new Response('no', { status: 404 }), /HTTP 404/],
  ])('%s', async (_, answer, want) => {
    const read = httpRange(async (r) => answer(r), 'https://assets.invalid');
    const reading = read('_cities-api/edge/rows/name_en-0.bin', 4, 7).then(
      (b) => Buffer.from(b).toString(),
      (e) => (e instanceof RangeIgnored ? `whole ${e.file.length}` : Promise.reject(e)),
    );
    if (typeof want === 'string') expect(await reading).toBe(want);
    else await expect(reading).rejects.toThrow(want);
  });
});

describe('ByteLru', () => {
  it('keeps values within its budget, the least recently used dropped first; none larger than the budget', () => {
    const lru = new ByteLru<string>(10);
    lru.set('a', 'A', 4);
    lru.set('b', 'B', 4);
    expect(lru.get('a')).toBe('A');
    lru.set('c', 'C', 4);
    expect([lru.has('a'), lru.has('b'), lru.has('c')]).toEqual([true, false, true]);
    lru.set('big', 'X', 11);
    expect(lru.has('big')).toBe(false);
    lru.set('a', 'A2', 6);
    expect([lru.get('a'), lru.has('c')]).toEqual(['A2', true]);
  });
});
