import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { assembleStored, cityStorage, type CityStorage } from '../src/core/page-assembly.js';
import { CityTable } from '../src/core/city-table.js';
import type { City } from '../src/core/fields.js';
import { CityIndex } from '../src/core/city-index.js';
import { datasetMemory, holdLent, pageMemory, reclaim, type WasmMemory } from '../src/http/page-memory.js';
import { makeCity } from './helpers.js';

// A served site's dataset lies in a shared WebAssembly memory (http/page-memory.ts), where its
// computed pages are assembled: byte for byte the page JavaScript copies from the same storage,
// for any cities (runs of neighbours in the file, scattered, repeated), and copied by JavaScript
// as before where the memory cannot hold the page (cities added after the load, a page larger
// than the scratch, no room for another thread's scratch). A page sent at once is lent as it lies
// in the scratch; one still being sent (holdLent) is never written over until its response closes.

const text = new TextEncoder();
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
/** A thread's scratch: 16 WebAssembly pages of 64 KiB (page-memory.ts). */
const SCRATCH_BYTES = 16 * 64 * 1024;
const HEAD = '{"count":30,"next":"http://x/cities/?page=3","previous":"http://x/cities/?q=名","results":[';

/**
 * `count` cities as a site's dataset file, read into a new memory (or `reused`, as the next load of
 * a server reads it: reclaim()): the table, and the same storage without the memory.
 */
function fileTable(count: number, padding = 0, reused?: WasmMemory) {
  const cities: City[] = Array.from({ length: count }, (_, i) =>
    makeCity(i + 1, { name: `City ${'é'.repeat(i % 5)}${'x'.repeat(((i * 7) % 30) + padding)}` }),
  );
  const file = text.encode(`[\n${cities.map((city) => JSON.stringify(city)).join(',\n')}\n]\n`);
  const held = datasetMemory(file.length, reused)!;
  held.bytes.set(file);
  const parts = CityTable.fromDatasetFile(held.bytes).parts();
  const memory = pageMemory(held.memory, parts.chunks);
  const table = CityTable.of(parts, memory);
  return { held, memory, table, copied: withoutMemory(table.storage()) };
}

const withoutMemory = ({ chunks, spans, joined }: CityStorage) => cityStorage(chunks, spans, joined);

/** The page of `positions` from `storage`, and whether the memory's scratch holds it (it was assembled there). */
function page(storage: CityStorage, positions: readonly number[]) {
  const bytes = assembleStored(HEAD, Uint32Array.from(positions), storage);
  const scratch = storage.memory?.scratch;
  return { text: decode(bytes), inScratch: !!scratch && decode(scratch.subarray(0, bytes.length)) === decode(bytes) };
}

describe('pages assembled in the memory of the dataset', () => {
  const { memory, table, copied } = fileTable(30);

  it('a table made with a memory gives it to its storage', () => {
    expect(memory).toBeDefined();
    expect(table.storage().memory).toBe(memory);
  });

  it.each([
    ['no city', []],
    ['one city', [0]],
    ['the first and last cities', [0, 29]],
    ['a run of neighbours in the file (one copy)', [6, 7, 8, 9, 10]],
    ['every city in file order', Array.from({ length: 30 }, (_, i) => i)],
    ['every city backwards', Array.from({ length: 30 }, (_, i) => 29 - i)],
    ['scattered, repeated and runs mixed', [29, 0, 17, 3, 3, 12, 28, 5, 6, 7, 8, 20, 21, 2, 3, 4, 4, 5]],
  ])('%s: the page JavaScript copies', (_, positions) => {
    const made = page(table.storage(), positions);
    expect(made).toEqual({ text: page(copied, positions).text, inScratch: true });
    expect(JSON.parse(made.text).results.map((city: City) => city.id)).toEqual(positions.map((p) => p + 1));
  });

  it('the page is a copy: the next page assembled leaves it as it was', () => {
    const first = assembleStored(HEAD, Uint32Array.of(1, 2), table.storage());
    const before = decode(first);
    assembleStored(HEAD, Uint32Array.of(20, 4, 9), table.storage());
    expect(decode(first)).toBe(before);
    expect(first.buffer).not.toBeInstanceOf(SharedArrayBuffer);
  });
});

describe('pages the memory cannot hold, copied by JavaScript', () => {
  it.each([
    [
      'cities added after the load lie outside it',
      () => {
        const { table } = fileTable(12);
        const more = table.appended([makeCity(500, { name: 'Added' })]);
        return { storage: more.storage(), positions: [11, 12, 0, 1] };
      },
    ],
    [
      'a page larger than the scratch',
      () => {
        const { table } = fileTable(400, 200);
        return { storage: table.storage(), positions: Array.from({ length: 400 }, (_, i) => (i * 7) % 400) };
      },
    ],
  ])('%s: the same bytes', (_, make) => {
    const { storage, positions } = make();
    expect(storage.memory).toBeDefined();
    const made = page(storage, positions);
    expect(made.inScratch).toBe(false);
    expect(made.text).toBe(page(withoutMemory(storage), positions).text);
  });

  it.each([
    ['exactly the size of the scratch: assembled there', 0, true],
    ['one byte larger than the scratch: copied', 1, false],
  ])('a page of %s (its head of 3-byte characters: as large as counted)', (_, over, inScratch) => {
    const { table, copied } = fileTable(400, 200);
    const { spans } = table.storage();
    // The first n cities (one run in the file) and a head that make the page 1 MiB (+ `over`) bytes.
    const length = (p: number) => spans[p * 3 + 2]! - spans[p * 3 + 1]!;
    let n = 0;
    let cities = 0;
    while (cities + length(n) + n < SCRATCH_BYTES - 30_000) cities += length(n++);
    const headBytes = () => SCRATCH_BYTES + over - cities - (n - 1) - 2;
    while (headBytes() % 3) cities += length(n++);
    const head = '名'.repeat(headBytes() / 3);
    const positions = Uint32Array.from({ length: n }, (_, i) => i);
    const bytes = assembleStored(head, positions, table.storage());
    expect(bytes.length).toBe(SCRATCH_BYTES + over);
    expect(decode(bytes)).toBe(decode(assembleStored(head, positions, copied)));
    const scratch = table.storage().memory!.scratch!;
    expect(scratch.length).toBe(SCRATCH_BYTES);
    expect(Buffer.from(scratch).equals(Buffer.from(bytes))).toBe(inScratch);
  });

  it("a memory with no room for this thread's scratch: no PageMemory (the table copies by JavaScript)", () => {
    const held = datasetMemory(100)!;
    // Grown to its maximum (as many pages at a time as it takes, then half as many...), as by threads that took its room.
    for (let pages = 65536; pages >= 1; )
      try {
        held.memory.grow(pages);
      } catch {
        pages >>= 1;
      }
    expect(pageMemory(held.memory, [held.bytes])).toBeUndefined();
  });
});

describe('pages lent from the scratch (answerListing for a page sent at once)', () => {
  /** A table in a memory, its index, and a page lent of `positions` (its bytes as lent, and where it lies). */
  function lending() {
    const { table, copied, memory } = fileTable(30);
    const index = new CityIndex(table);
    const lend = (positions: number[]) => {
      const bytes = assembleStored(HEAD, Uint32Array.from(positions), table.storage(), true);
      return { bytes, text: decode(bytes), at: bytes.byteOffset, shared: bytes.buffer instanceof SharedArrayBuffer };
    };
    const response = () => new EventEmitter() as unknown as ServerResponse;
    return { index, memory: memory!, copied, lend, response };
  }

  it('a page is the scratch itself, the bytes JavaScript copies', () => {
    const { lend, copied } = lending();
    const page = lend([3, 4, 5, 29]);
    expect(page.shared).toBe(true);
    expect(page.text).toBe(decode(assembleStored(HEAD, Uint32Array.of(3, 4, 5, 29), copied)));
  });

  it.each([
    [
      'a page sent at once (not held): the next page is assembled in the same scratch',
      ({ lend }: ReturnType<typeof lending>) => {
        const first = lend([1, 2]);
        expect(lend([7]).at).toBe(first.at);
      },
    ],
    [
      'a page held: the next ones go to another scratch, it is left as it was, and its scratch is free again once its response closes',
      ({ lend, index, response }: ReturnType<typeof lending>) => {
        const first = lend([1, 2]);
        const res = response();
        holdLent(index, first.bytes, res);
        const second = lend([20, 21, 22]);
        expect(second.at).not.toBe(first.at);
        expect(lend([9]).at).toBe(second.at);
        expect(decode(first.bytes)).toBe(first.text);
        res.emit('close');
        holdLent(index, lend([4]).bytes, response());
        expect(lend([5]).at).toBe(first.at);
      },
    ],
    [
      'a page held by a response closed already (its client left): its scratch is free again at once',
      ({ lend, index, response }: ReturnType<typeof lending>) => {
        const first = lend([1, 2]);
        const res = Object.assign(response(), { closed: true });
        holdLent(index, first.bytes, res);
        holdLent(index, lend([4]).bytes, response());
        expect(lend([5]).at).toBe(first.at);
      },
    ],
    [
      'a page not lent last (an older one, a copy) is not held: nothing is set aside',
      ({ lend, index, response, memory }: ReturnType<typeof lending>) => {
        const first = lend([1, 2]);
        lend([3]);
        holdLent(index, first.bytes, response());
        holdLent(index, assembleStored(HEAD, Uint32Array.of(6), index.storage), response());
        expect(memory.scratchAt).toBe(first.at);
      },
    ],
    [
      'every scratch held: pages are copied by JavaScript (the same bytes) until one is free again',
      ({ lend, index, response, memory, copied }: ReturnType<typeof lending>) => {
        const responses: ServerResponse[] = [];
        while (memory.scratch) {
          const res = response();
          responses.push(res);
          holdLent(index, lend([0]).bytes, res);
        }
        const page = lend([8, 9, 25]);
        expect(page.shared).toBe(false);
        expect(page.text).toBe(decode(assembleStored(HEAD, Uint32Array.of(8, 9, 25), copied)));
        responses[3]!.emit('close');
        expect(lend([8, 9, 25]).shared).toBe(true);
      },
    ],
  ])('%s', (_, check) => check(lending()));
});

describe('a memory taken back from its site, for the next dataset (reclaim)', () => {
  const positions = [3, 4, 5, 0, 29, 17];
  const response = () => new EventEmitter() as unknown as ServerResponse;
  /** A site's table in a memory, a page assembled in its scratch (where it is), and its memory's length. */
  function used() {
    const site = fileTable(30);
    page(site.table.storage(), positions);
    return { ...site, at: site.memory!.scratchAt, length: site.held.memory.buffer.byteLength };
  }

  it.each([
    [
      'no page held, the next dataset as large: read into it, not grown; its pages right, in the scratch the old site used, where the old one assembles nothing more',
      () => {
        const old = used();
        expect(reclaim(old.held.memory)).toBe(true);
        expect(old.memory!.scratch).toBeUndefined();
        const next = fileTable(30, 1, old.held.memory);
        expect(next.held.memory).toBe(old.held.memory);
        expect(old.held.memory.buffer.byteLength).toBe(old.length);
        expect(next.memory!.scratchAt).toBe(old.at);
        expect(page(next.table.storage(), positions)).toEqual({
          text: page(next.copied, positions).text,
          inScratch: true,
        });
      },
    ],
    [
      'a page lent from it still being sent: refused, nothing changed (the page as it was); once its response closes, taken back',
      () => {
        const old = used();
        const index = new CityIndex(old.table);
        const lent = assembleStored(HEAD, Uint32Array.of(1, 2), old.table.storage(), true);
        const text = decode(lent);
        const res = response();
        holdLent(index, lent, res);
        expect(reclaim(old.held.memory)).toBe(false);
        expect(old.memory!.scratch).toBeDefined();
        expect(decode(lent)).toBe(text);
        res.emit('close');
        expect(reclaim(old.held.memory)).toBe(true);
      },
    ],
    [
      'the next dataset larger than the memory: it grows to hold it, and its scratch lies past it (none the dataset covers)',
      () => {
        const old = used();
        expect(reclaim(old.held.memory)).toBe(true);
        const next = fileTable(3000, 300, old.held.memory);
        const size = next.held.bytes.length;
        expect(size).toBeGreaterThan(old.length);
        expect(next.held.memory).toBe(old.held.memory);
        expect(next.memory!.scratchAt).toBeGreaterThanOrEqual(size);
        const some = [0, 2999, 1500, 1501, 7];
        expect(page(next.table.storage(), some)).toEqual({ text: page(next.copied, some).text, inScratch: true });
      },
    ],
  ])('%s', (_, check) => check());
});
