import type { City, NameField } from './fields.js';
import { concatBytes, fromUtf8, indexOfBytes, utf8, utf8Length, writeUtf8, type Bytes } from './bytes.js';
import { cityJson } from './json-text.js';

const CHUNK_BYTES = 4 * 1024 * 1024;

/** A CityTable as plain data (see CityTable.parts). */
export interface TableParts {
  readonly count: number;
  readonly ids: Float64Array;
  readonly top: Uint8Array;
  readonly chunks: readonly Bytes[];
  readonly spans: Uint32Array;
}

/**
 * A dataset held compactly: every city serialized once, as the answers carry it, in a few large
 * buffers, with ids and top flags in typed arrays. Names are read back from the bytes only when
 * an ordering needs them, so a 140,000-city dataset costs about its JSON size in memory.
 */
export class CityTable {
  constructor(
    readonly count: number,
    readonly ids: Float64Array,
    readonly top: Uint8Array,
    private readonly chunks: readonly Bytes[],
    /** Per city: chunk index, start, end. */
    private readonly spans: Uint32Array,
  ) {}

  /**
   * The table of a site's dataset file (`datasetParts()` output: one city per line), without
   * copying it: the file's buffer becomes the table's storage.
   */
  static fromDatasetFile(file: Bytes): CityTable {
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
    for (let i = 0; i < count; i++) {
      const start = lines[2 * i]!,
        end = lines[2 * i + 1]!;
      ids[i] = Number(fromUtf8(file, start + ID_PREFIX.length, file.indexOf(0x2c, start)));
      // Quotes inside values are escaped, so the first `,"top":` after the city's start is its key.
      top[i] = file[indexOfBytes(file, TOP_KEY, start) + TOP_KEY.length] === 0x74 ? 1 : 0;
      spans.set([0, start, end], i * 3);
    }
    return new CityTable(count, ids, top, [file], spans);
  }

  /** A table made again from its parts (parts(), after they crossed to another thread). */
  static of({ count, ids, top, chunks, spans }: TableParts): CityTable {
    return new CityTable(count, ids, top, chunks, spans);
  }

  /** What the table is made of, as plain data: typed arrays a thread can hand over without copying. */
  parts(): TableParts {
    return { count: this.count, ids: this.ids, top: this.top, chunks: this.chunks, spans: this.spans };
  }

  /** With `sized`, its storage is allocated to the cities' size (a POST's few), not in 4 MiB chunks. */
  static fromCities(cities: readonly City[], sized = false): CityTable {
    const bytes = sized ? cities.reduce((n, city) => n + utf8Length(cityJson(city)), 0) : CHUNK_BYTES;
    const builder = new CityTableBuilder(bytes, sized ? Math.max(1, cities.length) : BLOCK);
    for (const city of cities) builder.add(city);
    return builder.finish();
  }

  /** The city at a position, serialized (a view, not a copy). */
  cityJson(position: number): Bytes {
    const s = position * 3;
    return this.chunks[this.spans[s]!]!.subarray(this.spans[s + 1], this.spans[s + 2]);
  }

  /** The length of each city serialized, by position. */
  jsonLengths(): Uint32Array {
    const lengths = new Uint32Array(this.count);
    for (let i = 0; i < this.count; i++) lengths[i] = this.spans[i * 3 + 2]! - this.spans[i * 3 + 1]!;
    return lengths;
  }

  /** Bytes of every city serialized, separators excluded. */
  jsonBytes(): number {
    let bytes = 0;
    for (let s = 0; s < this.spans.length; s += 3) bytes += this.spans[s + 2]! - this.spans[s + 1]!;
    return bytes;
  }

  city(position: number): City {
    return JSON.parse(fromUtf8(this.cityJson(position))) as City;
  }

  toCities(): City[] {
    return Array.from({ length: this.count }, (_, i) => this.city(i));
  }

  /** One city's value of a name field, read back from its serialized JSON. */
  name(position: number, field: NameField): string {
    return stringAfter(this.cityJson(position), utf8(`,"${field}":"`));
  }

  /** This table with `cities` after its own: what is stored is shared, the small per-city arrays copied. */
  appended(cities: readonly City[]): CityTable {
    if (!cities.length) return this;
    const more = CityTable.fromCities(cities, true);
    const count = this.count + more.count;
    const ids = new Float64Array(count);
    ids.set(this.ids);
    ids.set(more.ids, this.count);
    const top = new Uint8Array(count);
    top.set(this.top);
    top.set(more.top, this.count);
    const spans = new Uint32Array(count * 3);
    spans.set(this.spans);
    for (let i = 0; i < more.spans.length; i += 3)
      spans.set([more.spans[i]! + this.chunks.length, more.spans[i + 1]!, more.spans[i + 2]!], this.spans.length + i);
    return new CityTable(count, ids, top, [...this.chunks, ...more.chunks], spans);
  }

  /** The values of one name field, in dataset order, read back from the serialized cities. */
  names(field: NameField): string[] {
    const key = utf8(`,"${field}":"`);
    const values = new Array<string>(this.count);
    for (let i = 0; i < this.count; i++) values[i] = stringAfter(this.cityJson(i), key);
    return values;
  }

  /**
   * The dataset as a JSON array with one city per line (what `serve` loads), as a re-iterable
   * sequence of buffers of about 256 KiB, produced while being written.
   */
  datasetParts(): Iterable<Bytes> {
    if (!this.count) return [utf8('[]\n')];
    const table = this;
    return {
      *[Symbol.iterator]() {
        let group: Bytes[] = [OPEN];
        let size = OPEN.length;
        for (let i = 0; i < table.count; i++) {
          const city = table.cityJson(i);
          const separator = i + 1 < table.count ? COMMA_LINE : CLOSE;
          group.push(city, separator);
          size += city.length + separator.length;
          if (size >= PART_BYTES || i + 1 === table.count) {
            yield concatBytes(group, size);
            group = [];
            size = 0;
          }
        }
      },
    };
  }
}

const ID_PREFIX = utf8('{"id":');
const TOP_KEY = utf8(',"top":');
const PART_BYTES = 256 * 1024;
const OPEN = utf8('[\n');
const COMMA_LINE = utf8(',\n');
const CLOSE = utf8('\n]\n');

/** The JSON string value that follows `key` in serialized JSON (a key pattern cannot occur inside a string). */
function stringAfter(json: Bytes, key: Bytes): string {
  const start = indexOfBytes(json, key) + key.length;
  let end = start;
  let escaped = false;
  for (; end < json.length; end++) {
    const byte = json[end]!;
    if (byte === 0x22 && !(end > start && isEscaped(json, start, end))) break;
    if (byte === 0x5c) escaped = true;
  }
  return escaped ? (JSON.parse(fromUtf8(json, start - 1, end + 1)) as string) : fromUtf8(json, start, end);
}

function isEscaped(json: Bytes, start: number, quote: number): boolean {
  let backslashes = 0;
  for (let i = quote - 1; i >= start && json[i] === 0x5c; i--) backslashes++;
  return backslashes % 2 === 1;
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

  add(city: City): void {
    const text = cityJson(city);
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

  finish(): CityTable {
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
    return new CityTable(this.count, ids, top, chunks, spans);
  }
}

const BLOCK = 4096;
