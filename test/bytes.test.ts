import { describe, expect, it } from 'vitest';
import {
  allocBytes,
  concatBytes,
  fromUtf8,
  indexOfBytes,
  inSharedMemory,
  releaseBytes,
  setBytesBefore,
  toBase64,
  utf8,
  utf8Length,
  writeUtf8,
} from '../src/core/bytes.js';

// core/bytes.ts replaces Node's Buffer in the pure layers: each function must agree with Buffer.

const TEXTS = ['', 'abc', 'é', '\uFEFFleading BOM', 'a\uFEFF', '€', '😀', 'x\uD800y', '\uDC00', 'مدينة', '𝒜\u2028'];

describe('UTF-8 without Buffer, as Buffer does it', () => {
  it.each(TEXTS)('%j: encoded, measured and written as Buffer writes it', (text) => {
    expect(Buffer.from(utf8(text))).toEqual(Buffer.from(text));
    expect(utf8Length(text)).toBe(Buffer.byteLength(text));
    const out = new Uint8Array(utf8Length(text) + 2);
    expect(writeUtf8(text, out, 1)).toBe(Buffer.byteLength(text));
    expect(Buffer.from(out.subarray(1, 1 + Buffer.byteLength(text)))).toEqual(Buffer.from(text));
    const start = new Uint8Array(utf8Length(text) + 2).fill(9);
    expect(writeUtf8(text, start, 0)).toBe(Buffer.byteLength(text));
    expect([...start.subarray(Buffer.byteLength(text))]).toEqual([9, 9]);
  });

  it.each(TEXTS)('%j: decoded as Buffer decodes it (a leading U+FEFF is kept)', (text) => {
    const bytes = Buffer.from(`${text}|`);
    expect(fromUtf8(bytes, 0, bytes.length - 1)).toBe(bytes.toString('utf8', 0, bytes.length - 1));
  });

  it.each([
    ['a needle found after a false start', ',"a",,"b":"x', ',"b":"', 5],
    ['absent', 'abc', 'abd', -1],
    ['at the very end', 'xxab', 'ab', 2],
    ['from an offset', 'abab', 'ab', 2, 1],
  ] as [string, string, string, number, number?][])('indexOfBytes: %s', (_, hay, needle, want, from = 0) => {
    expect(indexOfBytes(utf8(hay), utf8(needle), from)).toBe(want);
    expect(Buffer.from(hay).indexOf(needle, from)).toBe(want);
  });

  it('concatBytes joins in order and keeps a lone part as it is', () => {
    const one = utf8('ab');
    expect(concatBytes([one])).toBe(one);
    expect(Buffer.from(concatBytes([one, utf8(''), utf8('é')]))).toEqual(Buffer.from('abé'));
  });
});

describe('allocBytes: small arrays carved from a shared slab never overlap', () => {
  it.each([
    ['many small ones, across slab boundaries', Array.from({ length: 400 }, (_, i) => 1 + ((i * 37) % 700))],
    ['ones at the carving limit and past it', [8192, 8192, 8193, 9000, 3, 8192]],
    ['empty ones among others', [0, 5, 0, 0, 4040, 0]],
  ])('%s: each has its size, and filling one leaves every other as it was', (_, sizes) => {
    const arrays = sizes.map((size, i) => allocBytes(size).fill(i % 251));
    arrays.forEach((bytes, i) => {
      expect(bytes.length).toBe(sizes[i]);
      expect(bytes.every((b) => b === i % 251)).toBe(true);
    });
  });

  it.each([
    ['the last one carved: its memory is the next one', () => [allocBytes(100)], 0, true],
    ['one carved before another: left alone', () => [allocBytes(100), allocBytes(50)], 0, false],
    ['one past the carving limit (its own array): left alone', () => [allocBytes(9000)], 0, false],
    [
      'the last one carved, then one past the limit: still the last carved',
      () => [allocBytes(100), allocBytes(9000)],
      0,
      true,
    ],
    [
      'one given back, then one of its size carved in its memory: the first given back again is left alone',
      () => {
        const first = allocBytes(100);
        releaseBytes(first);
        return [first, allocBytes(100)];
      },
      0,
      false,
    ],
  ] as const)('releaseBytes, %s', (_, carve, released, reused) => {
    const carved = carve();
    const given = carved[released]!;
    releaseBytes(given);
    const next = allocBytes(100);
    expect(next.buffer === given.buffer && next.byteOffset === given.byteOffset).toBe(reused);
    // Whatever was given back, the arrays still held are not the new one's memory.
    carved.forEach((bytes, i) => i !== released && bytes.fill(7));
    next.fill(9);
    carved.forEach((bytes, i) => i !== released && expect(bytes.every((b) => b === 7)).toBe(true));
  });

  it('a joined answer is not changed by the next one carved', () => {
    const first = concatBytes([utf8('{"a":'), utf8('1}')]);
    concatBytes([utf8('{"b":'), utf8('2}')]).fill(0x20);
    expect(fromUtf8(first)).toBe('{"a":1}');
  });
});

describe('setBytesBefore: out.set(src, at), fast from shared memory', () => {
  const pattern = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);
  // Sources at every offset within an 8-byte word, copied to every offset of one: each relative alignment.
  const cases = Array.from({ length: 64 }, (_, k) => [k >> 3, k & 7] as const);

  it.each(cases)(
    'a shared source at offset %i, placed at %i: the copy is exact and nothing after it is touched',
    (from, to) => {
      const shared = new Uint8Array(new SharedArrayBuffer(64));
      shared.set(pattern(64, from));
      const src = shared.subarray(from, from + 21);
      const out = new Uint8Array(40).fill(0xee);
      setBytesBefore(out, src, 8 + to, true);
      expect([...out.subarray(8 + to, 29 + to)]).toEqual([...src]);
      expect(out.subarray(29 + to).every((b) => b === 0xee)).toBe(true);
    },
  );

  it.each([
    ['shared sources, filled from the end', true],
    ['ordinary sources', false],
  ])('%s: pieces at arbitrary offsets join exactly as with set()', (_, isShared) => {
    const store = new Uint8Array(isShared ? new SharedArrayBuffer(4096) : new ArrayBuffer(4096));
    store.set(pattern(4096, 5));
    const pieces = [3, 517, 1046, 1561, 2087, 2605, 3121].map((at, i) => store.subarray(at, at + 300 + 17 * i));
    const size = pieces.reduce((n, piece) => n + piece.length + 1, 40);
    const want = new Uint8Array(size);
    const got = new Uint8Array(size);
    let at = size;
    for (let i = pieces.length - 1; i >= 0; i--) {
      at -= pieces[i]!.length + 1;
      want.set(pieces[i]!, at);
      setBytesBefore(got, pieces[i]!, at, isShared);
      want[at + pieces[i]!.length] = got[at + pieces[i]!.length] = 0x2c;
    }
    want.fill(0x7b, 0, at);
    got.fill(0x7b, 0, at);
    expect(got).toEqual(want);
  });

  it.each([
    ['a shared array', () => new Uint8Array(new SharedArrayBuffer(8)).subarray(2), true],
    ['an ordinary one', () => new Uint8Array(8), false],
    ['a Buffer', () => Buffer.from('abc'), false],
  ])('inSharedMemory: %s', (_, make, want) => {
    expect(inSharedMemory(make())).toBe(want);
  });

  it('told the source is not shared: only its own bytes are written', () => {
    const out = new Uint8Array(16).fill(1);
    setBytesBefore(out, Uint8Array.of(7, 7, 7), 9, false);
    expect([...out]).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 7, 7, 7, 1, 1, 1, 1]);
  });

  it('concatBytes of shared pieces at every alignment: joined exactly', () => {
    const shared = new Uint8Array(new SharedArrayBuffer(256));
    shared.set(pattern(256, 9));
    const parts = [0, 11, 37, 64, 101, 150].map((at, i) => shared.subarray(at, at + 13 + i));
    const joined = concatBytes([utf8('{'), ...parts, utf8('}')]);
    expect(Buffer.from(joined)).toEqual(
      Buffer.concat([Buffer.from('{'), ...parts.map((p) => Buffer.from(p)), Buffer.from('}')]),
    );
  });
});

describe('toBase64: as Buffer encodes it, without Buffer', () => {
  it.each([
    ['no byte', []],
    ['one byte: two padding characters', [0xff]],
    ['two bytes: one padding character', [0x00, 0xfe]],
    ['three bytes: none', [0x4d, 0x61, 0x6e]],
    ['every byte value', Array.from({ length: 256 }, (_, i) => i)],
    ['1,000 bytes of a pattern', Array.from({ length: 1000 }, (_, i) => (i * 131 + 7) & 255)],
    [
      'more than one run of 49,152 bytes, not a multiple of 3',
      Array.from({ length: 100_001 }, (_, i) => (i * 7) & 255),
    ],
    ['a page of JSON', [...new TextEncoder().encode('{"count":3,"results":[{"name":"Zürich"}]}')]],
  ])('%s', (_, values) => {
    const bytes = Uint8Array.from(values);
    expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    expect(toBase64(new Uint8Array([9, ...values, 9]).subarray(1, values.length + 1))).toBe(
      Buffer.from(bytes).toString('base64'),
    );
  });
});
