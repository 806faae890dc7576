import { describe, expect, it } from 'vitest';
import { BytePool } from '../src/site/byte-pool.js';
import { IndexPool } from '../src/site/index-pool.js';

// The arrays a scan reads its blocks into (site/byte-pool.ts): taken, given back once sent, and,
// where a read transferred one (a BYOB read of a body: its memory comes back in a new
// ArrayBuffer), the new ArrayBuffer taken back in its place.

/** A BYOB read's transfer: the array detached, its memory in a new ArrayBuffer. */
const transferred = (bytes: Uint8Array) =>
  new Uint8Array(structuredClone(bytes.buffer, { transfer: [bytes.buffer as ArrayBuffer] }));

describe('BytePool', () => {
  it.each([
    [
      'a transferred array, adopted, is taken back and handed out again',
      (pool: BytePool, a: Uint8Array) => {
        const moved = transferred(a);
        pool.adopt(a, moved);
        pool.give(moved);
        return moved;
      },
      true,
    ],
    ['an array not given back: a new one', () => undefined, false],
    [
      'a transferred array not adopted is not taken back (the pool made another ArrayBuffer)',
      (pool: BytePool, a: Uint8Array) => {
        const moved = transferred(a);
        pool.give(moved);
        return moved;
      },
      false,
    ],
    [
      'an array of another size is not adopted',
      (pool: BytePool, a: Uint8Array) => {
        transferred(a);
        const other = new Uint8Array(100);
        pool.adopt(a, other);
        pool.give(other);
        return other;
      },
      false,
    ],
    [
      'an array not detached is not adopted in place of another',
      (pool: BytePool, a: Uint8Array) => {
        const other = new Uint8Array(a.length);
        pool.adopt(a, other);
        pool.give(other);
        return other;
      },
      false,
    ],
  ])('%s', (_, read, reused) => {
    const pool = new BytePool(4);
    const a = pool.take(1000);
    const back = read(pool, a);
    const b = pool.take(1000);
    expect(b.buffer === back?.buffer).toBe(reused);
  });

  it('size 0 (a body of unknown length): the largest free array, else one the size of the largest made', () => {
    const pool = new BytePool(4);
    const [small, large] = [pool.take(1000), pool.take(200_000)];
    expect(pool.take(0).length).toBe(large.length);
    pool.give(small);
    pool.give(large);
    expect(pool.take(0).buffer).toBe(large.buffer);
    expect(pool.take(0).buffer).toBe(small.buffer);
  });
});

// A page's indices into a layout (site/index-pool.ts): arrays given back once the page is read,
// taken again by a later page; never one the pool did not make, nor one twice at once.
describe('IndexPool', () => {
  it.each<[string, (pool: IndexPool, a: Uint32Array) => void, (a: Uint32Array, b: Uint32Array) => boolean]>([
    [
      'an array given back: taken again, as a view of its start',
      (pool, a) => pool.give(a),
      (a, b) => b.buffer === a.buffer,
    ],
    ['an array not given back: a new one', () => undefined, (a, b) => b.buffer !== a.buffer],
    [
      "another's array given: not taken (the pool made a new one)",
      (pool) => pool.give(new Uint32Array(3000)),
      (a, b) => b.buffer !== a.buffer && madeFresh(b),
    ],
    [
      'an array given back twice: taken once',
      (pool, a) => {
        pool.give(a);
        pool.give(a.subarray(0, 10));
        pool.take(2000);
      },
      (a, b) => b.buffer !== a.buffer,
    ],
  ])('%s', (_, between, expected) => {
    const pool = new IndexPool(2);
    const a = pool.take(3000);
    between(pool, a);
    const b = pool.take(2000);
    expect(b.length).toBe(2000);
    expect(expected(a, b)).toBe(true);
  });

  it('a full pool keeps the longest arrays (a page of every city’s is the one worth keeping)', () => {
    const pool = new IndexPool(2);
    const [small, large, middle] = [pool.take(10), pool.take(5000), pool.take(100)];
    for (const indices of [small, middle, large]) pool.give(indices);
    expect(pool.size).toBe(2);
    expect(pool.take(4000).buffer).toBe(large.buffer);
    expect(pool.take(50).buffer).toBe(middle.buffer);
  });
});

/** Made by the pool: a whole array of its own (not a view of another's). */
const madeFresh = (b: Uint32Array) => b.byteOffset === 0 && b.buffer.byteLength === 2000 * 4;
