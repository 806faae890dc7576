import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bodyBytes } from '../src/core/page.js';
import { BytePool } from '../src/site/byte-pool.js';
import { blockEnds } from '../src/site/edge-ranges.js';
import {
  blockParts,
  checkHead,
  decodeBlock,
  DEFLATED_HEADER,
  deflatedBlockParts,
  isDeflated,
  MixedBuilds,
  tagBytes,
} from '../src/site/edge-format.js';
import { plainBlock } from '../src/site/edge-inflate.js';
import { isDeflatedBlock } from '../src/site/edge-runs.js';
import { deflateBlock } from '../src/store/compression.js';
import { parseQuery } from '../src/core/query-string.js';
import { ROUTES } from '../src/core/route-table.js';
import { blockPath, type EdgeIndex, type Layout } from '../src/site/edge-files.js';
import { EdgeSource } from '../src/site/edge-source.js';
import { BASE, differences, tiedIndex } from './edge-answers.js';
import { memoryEdgeSite } from './edge-helpers.js';

// The codec of a large tie group's fine blocks on a host that reads files whole (Cloudflare):
// written deflated (zlib's format) by the build, inflated by the edge source with the web-standard
// DecompressionStream. A deflated block inflates to the plain block's very bytes; anything else
// (corrupt, truncated, lengthened, of another build, read by a reader expecting a plain file) is an
// error naming the file, never other cities.

const TAG = '00112233445566ff';
const tag = tagBytes(TAG);
const cities = Array.from({ length: 40 }, (_, i) =>
  new TextEncoder().encode(`{"id":${i},"name_en":"City ${i % 3}","name_it":"Città ${i}"}`),
);
const plain = bodyBytes(blockParts(cities, tag));
const deflated = bodyBytes(deflatedBlockParts(cities, tag, deflateBlock));

/** The deflated file with its body (after the header) changed by `edit`, its header kept. */
function edited(edit: (body: Uint8Array) => Uint8Array, head = deflated.subarray(0, DEFLATED_HEADER)) {
  return Uint8Array.from([...head, ...edit(deflated.slice(DEFLATED_HEADER))]);
}

/** The deflated file's header saying `length` bytes of plain body. */
function withLength(length: number): Uint8Array {
  const head = deflated.slice(0, DEFLATED_HEADER);
  new DataView(head.buffer).setUint32(16, length, true);
  return head;
}

describe('a deflated block inflates to the plain block, byte for byte', () => {
  it("is smaller, marked deflated, and inflates to the plain bytes (into a new array, a pool's, an unaligned view)", async () => {
    expect([isDeflated(deflated), isDeflated(plain), deflated.length < plain.length]).toEqual([true, false, true]);
    expect(Buffer.from(await plainBlock(deflated, tag, 'b.bin')).equals(Buffer.from(plain))).toBe(true);
    const pool = new BytePool(2);
    const into = await plainBlock(deflated, tag, 'b.bin', pool.take);
    expect([Buffer.from(into).equals(Buffer.from(plain)), pool.owns(into)]).toEqual([true, true]);
    const shifted = new Uint8Array(deflated.length + 1);
    shifted.set(deflated, 1);
    const block = decodeBlock(await plainBlock(shifted.subarray(1), tag, 'b.bin'), tag, 'b.bin');
    expect(new TextDecoder().decode(block.city(39))).toBe(new TextDecoder().decode(cities[39]));
  });

  it('a plain block is given back as it is, not copied', async () =>
    expect(await plainBlock(plain, tag, 'b.bin')).toBe(plain));

  it('the same cities give the same bytes (zlib with fixed settings writes no date)', () =>
    expect(Buffer.from(bodyBytes(deflatedBlockParts(cities, tag, deflateBlock))).equals(Buffer.from(deflated))).toBe(
      true,
    ));
});

describe('a deflated block that cannot be trusted is an error naming it', () => {
  it.each<[string, () => Uint8Array, RegExp]>([
    [
      'a byte of its deflated cities changed (zlib checks them)',
      () => edited((body) => body.map((b, i) => (i === body.length >> 1 ? b ^ 0x5a : b))),
      /b\.bin cannot be read: (its deflated cities do not inflate|its cities inflate to)/,
    ],
    [
      'its last bytes cut (a truncated upload)',
      () => edited((body) => body.subarray(0, body.length - 9)),
      /b\.bin cannot be read/,
    ],
    ['its checksum cut', () => edited((body) => body.subarray(0, body.length - 4)), /b\.bin cannot be read/],
    ['nothing after its header', () => edited(() => new Uint8Array(0)), /b\.bin cannot be read/],
    [
      'not zlib at all',
      () => edited((body) => body.map(() => 0x41)),
      /b\.bin cannot be read: its deflated cities do not inflate/,
    ],
    [
      'its header says fewer bytes than its cities inflate to',
      () => edited((body) => body, withLength(plain.length - 16 - 1)),
      /b\.bin cannot be read: its cities inflate to \d+ bytes, not the \d+ its header says/,
    ],
    [
      'its header says more bytes than its cities inflate to',
      () => edited((body) => body, withLength(plain.length - 16 + 1)),
      /b\.bin cannot be read: its cities inflate to \d+ bytes, not the \d+ its header says/,
    ],
    [
      'its header says 0 bytes',
      () => edited((body) => body, withLength(0)),
      /b\.bin cannot be read: its cities inflate to \d+ bytes, not the 0 its header says/,
    ],
    [
      'cut inside its header',
      () => deflated.subarray(0, DEFLATED_HEADER - 2),
      /b\.bin cannot be read: it is not a deflated block/,
    ],
    [
      'a valid zlib stream of the right length whose last city end is another (checked as a plain block is)',
      () => edited(() => deflateSync(plain.subarray(16).map((b, i) => (i === 4 * cities.length - 1 ? b + 1 : b)))),
      /b\.bin cannot be read: its cities end elsewhere than the file/,
    ],
  ])('%s', async (_, file, message) => {
    const read = async () => decodeBlock(await plainBlock(file(), tag, 'b.bin'), tag, 'b.bin');
    await expect(read()).rejects.toThrow(message);
  });

  it('of another build: MixedBuilds before anything is inflated (a reader starts again from the index)', async () => {
    const error = await plainBlock(deflated, tagBytes('ffffffffffffffff'), 'b.bin').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MixedBuilds);
    expect((error as Error).message).toMatch(/b\.bin is from another build than the edge index/);
  });

  it.each<[string, () => unknown, RegExp]>([
    // A reader of a version before deflated blocks checks the magic: "not an edge data file", rebuild.
    [
      'read as a plain block',
      () => decodeBlock(deflated, tag, 'b.bin'),
      /b\.bin cannot be read: it is deflated where a plain file was expected/,
    ],
    [
      "its head read by range as a plain block's",
      () => blockEnds(deflated.subarray(0, 16 + 4 * cities.length), cities.length, tag, 'b.bin'),
      /b\.bin cannot be read: it is deflated where the edge index lists a plain block/,
    ],
  ])('%s', (_, read, message) => expect(read).toThrow(message));

  it('its header is an edge file of this build (a held file is checked before it is read)', () =>
    expect(() => checkHead(deflated.subarray(0, 16), tag, 'b.bin')).not.toThrow());
});

describe("isDeflatedBlock: the index lists a layout's deflated blocks as pairs [first, after the last)", () => {
  const deflatedRuns = [3, 5, 9, 10, 20, 40];
  it.each<[number, boolean]>([
    [0, false],
    [2, false],
    [3, true],
    [4, true],
    [5, false],
    [8, false],
    [9, true],
    [10, false],
    [19, false],
    [20, true],
    [39, true],
    [40, false],
    [1000, false],
  ])('block %i: %s', (b, expected) => {
    expect(isDeflatedBlock({ deflated: deflatedRuns }, b)).toBe(expected);
    expect(isDeflatedBlock({}, b)).toBe(false);
  });
});

describe('through the edge source: a deflated block that cannot be read fails its request, clearly, and only it', () => {
  const index = tiedIndex(3_000);
  const site = memoryEdgeSite(index, undefined, 16_000, true);
  const head = JSON.parse(new TextDecoder().decode(site.files.get(ROUTES.edge.index))) as EdgeIndex;
  // A page of one city in the first block of a layout's first deflated run: it reads that block alone.
  const [layout, runs] = Object.entries(head.deflated!)[0]! as [Layout, number[]];
  const block = runs[0]!;
  const path = blockPath(layout, block);
  const query = `ordering=${layout}&page_size=1&page=${(head.layouts[layout] as number[])[block]! + 1}`;
  const other = memoryEdgeSite(index, 'ffffffffffffffff', 16_000, true).files.get(path)!;

  it.each<[string, (file: Uint8Array) => Uint8Array, RegExp]>([
    [
      'a byte of its cities changed',
      (file) => file.map((b, i) => (i === file.length - 20 ? b ^ 0xff : b)),
      /cannot be read/,
    ],
    ['truncated', (file) => file.subarray(0, file.length - 30), /cannot be read/],
    ['cut to its header', (file) => file.subarray(0, DEFLATED_HEADER), /cannot be read/],
    ['of another build', () => other, /is from another build than the edge index/],
  ])(
    '%s: that request rejects naming the file; the file put right, the same source answers',
    async (_, spoil, message) => {
      const good = site.files.get(path)!;
      expect(isDeflated(good)).toBe(true);
      const source = new EdgeSource(site.read);
      site.files.set(path, spoil(good));
      try {
        const failed = await source.stream(parseQuery(query), BASE).catch((e: unknown) => e as Error);
        expect(failed).toBeInstanceOf(Error);
        expect((failed as Error).message).toMatch(message);
        expect((failed as Error).message).toContain(path);
      } finally {
        site.files.set(path, good);
      }
      expect(await differences(index, source, [query, `ordering=-${layout},name_en&page_size=100&page=3`])).toEqual([]);
    },
  );
});
