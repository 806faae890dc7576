import { describe, expect, it } from 'vitest';
import { Doorkeeper } from '../src/http/doorkeeper.js';

// The doorkeeper says "again" only for a key offered before, once; keys that differ anywhere, in
// a code unit of either parity (the fingerprint reads two at a time), are told apart.

describe('Doorkeeper', () => {
  it.each([
    ['an empty key', ''],
    ['one code unit', 'a'],
    ['an odd length', '/cities/?page_size=7&n=1'],
    ['an even length', '/cities/?page_size=7&n=12'],
    ['non-ASCII', '/cities/?ordering=名'],
  ])('%s: first time no, second yes, then forgotten', (_, key) => {
    const door = new Doorkeeper();
    expect([door.again(key), door.again(key), door.again(key)]).toEqual([false, true, false]);
  });

  it.each([
    ['the last unit of an odd length', '/cities/?n=1', '/cities/?n=2'],
    ['the last unit of an even length', '/cities/?n=10', '/cities/?n=11'],
    ['the first unit', 'a/cities/', 'b/cities/'],
    ['a unit swapped with its neighbour', '/cities/?ab', '/cities/?ba'],
    ['one unit longer', '/cities/?n=1', '/cities/?n=1&'],
  ])('keys differing by %s are not taken for one another', (_, a, b) => {
    const door = new Doorkeeper();
    door.again(a);
    expect(door.again(b)).toBe(false);
    expect(door.again(a)).toBe(true);
  });

  it('20,000 queries differing in a counter: each is "again" at its second time only', () => {
    const door = new Doorkeeper();
    const keys = Array.from({ length: 20000 }, (_, i) => `/cities/?page_size=7&page=3&n=${i}`);
    let early = 0;
    for (const key of keys) if (door.again(key)) early++;
    for (const key of keys) door.again(key);
    // A slot holds one key: later keys take the slots of earlier ones; a key is taken for another
    // only when their 32-bit fingerprints are equal.
    expect(early).toBe(0);
    const fresh = new Doorkeeper();
    expect(keys.slice(0, 4096).filter((key) => fresh.again(key) || !fresh.again(key)).length).toBe(0);
  });
});
