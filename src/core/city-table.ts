import type { City, NameField } from './fields.js';
import { concatBytes, fromUtf8, indexOfBytes, utf8, utf8Length, type Bytes } from './bytes.js';
import { cityJson } from './json-text.js';
import type { PageMemory } from './memory-assembly.js';
import { cityStorage, storedCity, type CityStorage } from './page-assembly.js';
import { CityTableBuilder, datasetFileParts, type TableParts } from './table-parts.js';

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
    /** How many of the first chunks hold their cities one after another with one comma between (a loaded dataset file: table-parts.ts). */
    private readonly joined = 0,
    /** The memory its chunks lie in, where pages are assembled (PageMemory: serve's). */
    private readonly memory?: PageMemory,
  ) {}

  /**
   * The table of a site's dataset file (`datasetParts()` output: one city per line), without
   * copying it: the file's buffer becomes the table's storage, its lines moved in place (datasetFileParts).
   */
  static fromDatasetFile(file: Bytes): CityTable {
    return CityTable.of(datasetFileParts(file));
  }

  /** A table made again from its parts (parts(), after they crossed to another thread), `memory`: where its chunks lie. */
  static of({ count, ids, top, chunks, spans, joined }: TableParts, memory?: PageMemory): CityTable {
    return new CityTable(count, ids, top, chunks, spans, joined, memory);
  }

  /** What the table is made of, as plain data: typed arrays a thread can hand over without copying. */
  parts(): TableParts {
    const { count, ids, top, chunks, spans, joined } = this;
    return { count, ids, top, chunks, spans, joined };
  }

  /**
   * This table with its cities in `order` (every position once): city `k` is this table's
   * `order[k]`. Nothing is copied but the per-city arrays; the bytes stay where they are.
   */
  permuted(order: Uint32Array): CityTable {
    const { count } = this;
    const ids = new Float64Array(count);
    const top = new Uint8Array(count);
    const spans = new Uint32Array(count * 3);
    for (let k = 0; k < count; k++) {
      const p = order[k]!;
      ids[k] = this.ids[p]!;
      top[k] = this.top[p]!;
      spans.set(this.spans.subarray(p * 3, p * 3 + 3), k * 3);
    }
    return new CityTable(count, ids, top, this.chunks, spans, this.joined, this.memory);
  }

  /** With `sized`, its storage is allocated to the cities' size (a POST's few), not in 4 MiB chunks. */
  static fromCities(cities: readonly City[], sized = false): CityTable {
    if (!sized) {
      const builder = new CityTableBuilder();
      for (const city of cities) builder.add(city);
      return CityTable.of(builder.finish());
    }
    // Each city serialized once: its length sizes the storage, then its text is stored.
    const texts = cities.map((city) => cityJson(city));
    const builder = new CityTableBuilder(
      texts.reduce((n, text) => n + utf8Length(text), 0),
      Math.max(1, cities.length),
    );
    cities.forEach((city, i) => builder.add(city, texts[i]));
    return CityTable.of(builder.finish());
  }

  private stored: CityStorage | undefined;

  /** Where the cities' bytes lie, for copying pages from (page-assembly.ts). */
  storage(): CityStorage {
    return (this.stored ??= cityStorage(this.chunks, this.spans, this.joined, this.memory));
  }

  /** The city at a position, serialized (a view, not a copy). */
  cityJson(position: number): Bytes {
    return storedCity(this.storage(), position);
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
    // The memory holds this table's chunks: the new ones, after them, lie outside it (PageMemory.chunks).
    return new CityTable(count, ids, top, [...this.chunks, ...more.chunks], spans, this.joined, this.memory);
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
