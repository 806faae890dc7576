import { describe, expect, it } from 'vitest';
import { allocBytes } from '../src/core/bytes.js';
import { assemble, assembleStored, cityStorage } from '../src/core/page-assembly.js';
import { envelopeJson } from '../src/core/json-text.js';
import { CityTable } from '../src/core/city-table.js';

// A page copied from a storage (spans into chunks) is byte for byte the page assembled from the
// cities' views, wherever the chunks lie: shared or not, at any offset in their buffers, the
// output at any place of the slab (the copy from shared memory moves bytes by their 8-byte words),
// and whether neighbours of a joined chunk are copied as one run or each apart.

const text = new TextEncoder();
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/**
 * Cities of varied lengths (1 to 40 bytes more than `{"i":N}`, some non-ASCII) in `chunkCount`
 * chunks at `offset` bytes into their buffers, each followed by `,\n`; with `joined`, in the first
 * `joined` chunks (marked so: cityStorage's `joined`) by `,` alone, in the others by one space
 * (neighbours one byte apart there too, so that a run made in a chunk not joined shows).
 */
function storageOf(count: number, chunkCount: number, offset: number, shared: boolean, joined = 0) {
  const cities = Array.from({ length: count }, (_, i) =>
    text.encode(`{"i":${i},"n":"${'é'.repeat(i % 7)}${'x'.repeat((i * 5) % 40)}"}`),
  );
  const perChunk = Math.ceil(count / chunkCount);
  const chunks: Uint8Array[] = [];
  const spans = new Uint32Array(count * 3);
  for (let c = 0; c * perChunk < count; c++) {
    const mine = cities.slice(c * perChunk, (c + 1) * perChunk);
    const separator = text.encode(c < joined ? ',' : joined ? ' ' : ',\n');
    const bytes = mine.reduce((n, city) => n + city.length + separator.length, 0);
    const buffer = shared ? new SharedArrayBuffer(bytes + offset) : new ArrayBuffer(bytes + offset);
    const chunk = new Uint8Array(buffer, offset, bytes);
    let at = 0;
    mine.forEach((city, k) => {
      chunk.set(city, at);
      chunk.set(separator, at + city.length);
      spans.set([c, at, at + city.length], (c * perChunk + k) * 3);
      at += city.length + separator.length;
    });
    chunks.push(chunk);
  }
  return { cities, storage: cityStorage(chunks, spans, joined) };
}

const HEAD = '{"count":30,"next":"http://x/cities/?page=3","previous":"http://x/cities/?q=名","results":[';

describe('assembleStored: the page assemble() makes of the same cities', () => {
  it.each([
    ['shared, one chunk, at offset 0', 30, 1, 0, true],
    ['shared, one chunk, at offset 3', 30, 1, 3, true],
    ['shared, four chunks, at offset 5', 30, 4, 5, true],
    ['not shared, three chunks, at offset 1', 30, 3, 1, false],
    ['shared, one joined chunk, at offset 0', 30, 1, 0, true, 1],
    ['shared, one joined chunk, at offset 3', 30, 1, 3, true, 1],
    ['shared, four chunks, the first two joined (runs end at a chunk), at offset 5', 30, 4, 5, true, 2],
    ['not shared, three joined chunks, at offset 1', 30, 3, 1, false, 3],
  ])('%s', (_, count, chunkCount, offset, shared, joined = 0) => {
    const { cities, storage } = storageOf(count, chunkCount, offset, shared, joined);
    expect(storage.shared).toBe(shared);
    for (const positions of [
      [],
      [0],
      [29, 0, 17, 3, 3, 12, 28],
      Array.from({ length: 30 }, (_, i) => 29 - i),
      Array.from({ length: 30 }, (_, i) => i),
      [5, 6, 7, 8, 20, 21, 2, 3, 4, 4, 5, 29],
      [6, 7, 8, 9, 10],
    ]) {
      // Each output starts at another place of the slab (its alignment against the chunk's varies).
      for (let skew = 0; skew < 8; skew++) {
        allocBytes(skew + 1);
        const page = decode(assembleStored(HEAD, Uint32Array.from(positions), storage));
        expect(page).toBe(decode(assemble(HEAD, positions.length, (i) => cities[positions[i]!]!)));
        expect(JSON.parse(page).results.map((city: { i: number }) => city.i)).toEqual(positions);
      }
    }
  });

  it("a city table's storage gives its cities", () => {
    const table = CityTable.fromDatasetFile(text.encode('[\n{"id":1,"top":true},\n{"id":2,"top":false}\n]\n'));
    expect(decode(assembleStored('{"results":[', Uint32Array.of(1, 0), table.storage()))).toBe(
      '{"results":[{"id":2,"top":false},{"id":1,"top":true}]}',
    );
  });

  it('a page of more cities than are assembled at once is produced in parts, the same bytes', () => {
    const { cities, storage } = storageOf(1200, 3, 3, true);
    const positions = Uint32Array.from({ length: 1200 }, (_, i) => (i * 7) % 1200);
    const stored = [...envelopeJson(1200, 'null', 'null', 1200, { positions, storage })];
    const viewed = [...envelopeJson(1200, 'null', 'null', 1200, (i) => cities[positions[i]!]!)];
    expect(stored.length).toBeGreaterThan(0);
    expect(Buffer.concat(stored).equals(Buffer.concat(viewed))).toBe(true);
  });
});
