import type { City } from './fields.js';
import { fromUtf8, utf8, utf8Length, writeUtf8, type Bytes } from './bytes.js';
import { cityJson } from './json-text.js';

// What a CityTable is made of, made: city by city as a dataset is read, or from the lines of a
// site's dataset file without copying it. (city-table.ts makes the table of them.)

export const CHUNK_BYTES = 4 * 1024 * 1024;
export const BLOCK = 4096;

/** A CityTable as plain data (see CityTable.parts). */
export interface TableParts {
  readonly count: number;
  readonly ids: Float64Array;
  readonly top: Uint8Array;
  readonly chunks: readonly Bytes[];
  readonly spans: Uint32Array;
  /** How many of the first chunks are comma-joined (CityTable.laidOut); none when absent. */
  readonly joined?: number;
}

/**
 * The parts of a site's dataset file (`datasetParts()` output: one city per line), without
 * copying it: the file's buffer becomes the table's storage. Each line is moved back over the
 * line break before it, so that the cities lie one after another with one comma between (`joined`:
 * the cities of a page that follow one another in the file are copied as one run, page-assembly.ts).
 */
export function datasetFileParts(file: Bytes): TableParts {
  const lines: number[] = [];
  for (let start = file.indexOf(0x7b); start >= 0; ) {
    const newline = file.indexOf(0x0a, start);
    const end = newline < 0 ? file.length : newline;
    lines.push(start, file[end - 1] === 0x2c ? end - 1 : end);
    start = newline < 0 ? -1 : file.indexOf(0x7b, newline);
  }
  const count = lines.length / 2;
  const ids = new Float64Array(count);
  const top = new Uint8Array(count);
  const spans = new Uint32Array(count * 3);
  let to = lines[0] ?? 0;
  for (let i = 0; i < count; i++) {
    const start = lines[2 * i]!,
      end = lines[2 * i + 1]!;
    ids[i] = idAt(file, start + ID_PREFIX.length);
    // Quotes inside values are escaped, so the one `,"top":` of the city is its key (near its end).
    top[i] = file[lastKeyEnd(file, TOP_KEY, start, end)] === 0x74 ? 1 : 0;
    // The city and the comma after it (the last city has none: nothing is joined after it).
    if (to !== start) file.copyWithin(to, start, end + 1);
    spans[3 * i + 1] = to;
    spans[3 * i + 2] = to + end - start;
    to += end - start + 1;
  }
  return { count, ids, top, chunks: [file], spans, joined: 1 };
}

const ID_PREFIX = utf8('{"id":');
const TOP_KEY = utf8(',"top":');

// The two below read a few bytes each where the whole line was searched (indexOfBytes from its
// start, an indexOf call per comma; and a string made of each id): ~210 ms of CPU of each reload
// of a 140k-city site, ~120 ms now.

/** The id written at `at` (up to the comma after it): its digits read here, anything else as Number() reads it. */
function idAt(file: Bytes, at: number): number {
  let value = 0;
  for (let i = at; i < file.length; i++) {
    const c = file[i]!;
    if (c === 0x2c && i > at && value <= Number.MAX_SAFE_INTEGER) return value;
    if (c < 0x30 || c > 0x39) break;
    value = value * 10 + (c - 0x30);
  }
  return Number(fromUtf8(file, at, file.indexOf(0x2c, at)));
}

/** Where the value after the last `key` in [start, end) begins, or -1 (the byte there is then undefined). */
function lastKeyEnd(bytes: Bytes, key: Bytes, start: number, end: number): number {
  for (let i = end - key.length; i >= start; i--) {
    let k = 0;
    while (k < key.length && bytes[i + k] === key[k]) k++;
    if (k === key.length) return i + key.length;
  }
  return -1;
}

/**
 * Builds a CityTable one validated city at a time. Nothing large is ever freed on the way: ids,
 * flags and spans fill blocks of BLOCK cities (each under glibc's 128 KiB mmap threshold) joined
 * once at the end, and the last chunk is kept as a view, not sliced. (A freed multi-MB block
 * raises glibc's mmap threshold for the rest of the process: every malloc arena then keeps up to
 * twice as much free memory, about 40 MB more peak RSS for a 140,000-city build.)
 */
export class CityTableBuilder {
  private chunks: Bytes[] = [];
  private chunk: Bytes = new Uint8Array(0);
  private used = 0;
  private count = 0;
  private readonly blocks: { ids: Float64Array; top: Uint8Array; spans: Uint32Array }[] = [];

  constructor(
    private readonly chunkBytes = CHUNK_BYTES,
    private readonly block = BLOCK,
  ) {}

  /** `text`: the city serialized (cityJson), when the caller has it already. */
  add(city: City, text = cityJson(city)): void {
    const length = utf8Length(text);
    if (this.used + length > this.chunk.length) {
      if (this.used) this.chunks.push(this.chunk.subarray(0, this.used));
      this.chunk = new Uint8Array(Math.max(this.chunkBytes, length));
      this.used = 0;
    }
    writeUtf8(text, this.chunk, this.used);
    const at = this.count % this.block;
    if (!at) {
      const n = this.block;
      this.blocks.push({ ids: new Float64Array(n), top: new Uint8Array(n), spans: new Uint32Array(3 * n) });
    }
    const block = this.blocks[this.blocks.length - 1]!;
    block.ids[at] = city.id;
    block.top[at] = city.top ? 1 : 0;
    block.spans.set([this.chunks.length, this.used, this.used + length], at * 3);
    this.used += length;
    this.count++;
  }

  /** The table's parts (CityTable.of makes the table). */
  finish(): TableParts {
    const chunks = this.used ? [...this.chunks, this.chunk.subarray(0, this.used)] : this.chunks;
    const ids = new Float64Array(this.count);
    const top = new Uint8Array(this.count);
    const spans = new Uint32Array(this.count * 3);
    this.blocks.forEach((block, b) => {
      const n = Math.min(this.block, this.count - b * this.block);
      ids.set(block.ids.subarray(0, n), b * this.block);
      top.set(block.top.subarray(0, n), b * this.block);
      spans.set(block.spans.subarray(0, n * 3), b * this.block * 3);
    });
    return { count: this.count, ids, top, chunks, spans };
  }
}
