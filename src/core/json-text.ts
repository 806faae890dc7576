import { NAME_FIELDS, type City } from './fields.js';
import { concatBytes, fromUtf8, utf8, utf8Length, type Bytes } from './bytes.js';
import { assemble, assembleStored, COMMA, storedCity, TAIL, type CityStorage } from './page-assembly.js';
import { prettyParts } from './pretty-json.js';

// Bytes exactly as DRF's JSONRenderer writes them: compact separators, UTF-8 (not \u-escaped),
// U+2028/U+2029 escaped, and floats as Python's repr() writes them (`66.0`, `1e-06`).

/** A JSON string literal as Python's json.dumps(ensure_ascii=False) + DRF write it. */
export function jsonString(s: string): string {
  const text = JSON.stringify(s);
  return text.includes('\u2028') || text.includes('\u2029')
    ? text.replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029')
    : text;
}

/** Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 or from 1e16. */
export function pyFloatRepr(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = x.toExponential().split('e') as [string, string];
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const decpt = Number(exp) + 1;
  let body: string;
  if (decpt <= -4 || decpt > 16) {
    const e = decpt - 1;
    const frac = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    body = `${frac}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  } else if (decpt <= 0) {
    body = `0.${'0'.repeat(-decpt)}${digits}`;
  } else if (decpt >= digits.length) {
    body = `${digits}${'0'.repeat(decpt - digits.length)}.0`;
  } else {
    body = `${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  }
  return negative ? `-${body}` : body;
}

/** One city as the reference serializes it: all 22 fields in the spec's order. */
export function cityJson(city: City): string {
  let out = `{"id":${city.id}`;
  for (const field of NAME_FIELDS) out += `,"${field}":${jsonString(city[field])}`;
  const coordinate = (v: number | null) => (v === null ? 'null' : pyFloatRepr(v));
  return `${out},"longitude":${coordinate(city.longitude)},"latitude":${coordinate(city.latitude)},"top":${city.top},"created_at":"${city.created_at}","updated_at":"${city.updated_at}"}`;
}

/** Pages of up to this many cities are assembled into one buffer; larger ones are produced in parts. */
const EAGER_CITIES = 500;
/** About the size of each part (a part ends with the city that reaches it). */
export const PART_BYTES = 256 * 1024;

/** An answer produced in parts, re-iterable, whose total length is known without producing it. */
export interface Parts extends Iterable<Bytes> {
  readonly byteLength: number;
}

/** A page's cities as positions of a storage (a CityIndex's), copied from it without a view of each. */
export interface StoredCities {
  readonly positions: Uint32Array;
  readonly storage: CityStorage;
  /** The page may be lent from the storage's memory (assembleStored's `lent`). */
  readonly lent?: boolean;
}

/**
 * The paginated envelope, by concatenating already-serialized cities (`city(0..n-1)`, or stored
 * ones): one buffer for ordinary pages; for the largest (all cities on one page) a re-iterable
 * sequence of parts of about PART_BYTES, produced while being written, so such a page is never
 * held whole. `next` and `previous` are JSON already: a string literal or `null`.
 */
export function envelopeJson(
  count: number,
  next: string,
  previous: string,
  n: number,
  cities: ((i: number) => Bytes) | StoredCities,
): Iterable<Bytes> | Parts {
  const head = envelopeHead(count, next, previous);
  let city: (i: number) => Bytes;
  if (typeof cities === 'function') city = cities;
  else {
    const { positions, storage } = cities;
    if (n <= EAGER_CITIES) return [assembleStored(head, positions, storage, cities.lent)];
    city = (i) => storedCity(storage, positions[i]!);
  }
  if (n <= EAGER_CITIES) return [assemble(head, n, city)];
  function* parts(): Generator<Bytes> {
    let group: Bytes[] = [utf8(head)];
    let size = group[0]!.length;
    for (let i = 0; i < n; i++) {
      const bytes = city(i);
      if (i) group.push(COMMA);
      group.push(bytes);
      size += bytes.length + (i ? 1 : 0);
      if (size >= PART_BYTES) {
        yield concatBytes(group, size);
        group = [];
        size = 0;
      }
    }
    group.push(TAIL);
    yield concatBytes(group, size + TAIL.length);
  }
  return {
    [Symbol.iterator]: parts,
    get byteLength() {
      let size = utf8Length(head) + n - 1 + TAIL.length;
      for (let i = 0; i < n; i++) size += city(i).length;
      return size;
    },
  };
}

export function envelopeHead(count: number, next: string, previous: string): string {
  if (count !== headCount) [headCount, headOpen] = [count, `{"count":${count},"next":`];
  return `${headOpen}${next},"previous":${previous},"results":[`;
}
/** The last count an envelope was written for, and its head up to `next`'s value (made once, not per page). */
let headCount = -1;
let headOpen = '';

/**
 * Where envelopeJson's cities lie in its bytes, given their lengths: city `i` is bytes
 * `[at[i], at[i + 1] - 1)` (each is followed by one byte: a comma, or the last one by `]`).
 */
export function resultOffsets(
  count: number,
  next: string,
  previous: string,
  n: number,
  length: (i: number) => number,
): Float64Array {
  const at = new Float64Array(n + 1);
  at[0] = utf8Length(envelopeHead(count, next, previous));
  for (let i = 0; i < n; i++) at[i + 1] = at[i]! + length(i) + COMMA.length;
  return at;
}

/** Parts produced afresh on each iteration; their length is measured by producing them once. */
export function lazyParts(produce: () => Iterable<Bytes>): Parts {
  return {
    [Symbol.iterator]: () => produce()[Symbol.iterator](),
    get byteLength() {
      let size = 0;
      for (const part of produce()) size += part.length;
      return size;
    },
  };
}

/** A DRF error body such as `{"detail":"Invalid page."}`. */
export function detailJson(detail: string): string {
  return `{"detail":${jsonString(detail)}}`;
}

/**
 * Re-indents compact JSON as Python's json.dumps(indent=n, separators=(',', ': ')) lays it out,
 * touching only whitespace, so every token keeps its exact spelling (see pretty-json.ts).
 */
export function indentJson(compact: string, indent: number): string {
  return fromUtf8(concatBytes([...prettyParts([utf8(compact)], indent)]));
}
