import { utf8 } from '../core/bytes.js';
import { CITY_FIELDS } from '../core/fields.js';

// A city of a fine block (edge-cuts.ts) written compact: its values' JSON texts only, the keys
// being the same in every city (`{"id":`, `,"name_ar":`, ... `,"updated_at":`, then `}`, from
// the field list). A value is followed by SEPARATOR (but the last); a value equal to an earlier
// one of the same city is the one byte of that field's number instead. Neither byte can occur in
// JSON text (control bytes are escaped in strings), and a compact city starts with its id, never
// with `{`: a city whose JSON does not follow the keys is written as its JSON. A page's cities are
// expanded back one at a time into one scratch array, each copied out at once by its reader.

/** Each field's key as a city's JSON writes it, with the `{` or `,` before it. */
const KEYS = CITY_FIELDS.map((field, k) => utf8(`${k ? ',' : '{'}${JSON.stringify(field)}:`));
const FIELDS = KEYS.length;
const [OPEN, CLOSE, QUOTE, BACKSLASH, COMMA] = [0x7b, 0x7d, 0x22, 0x5c, 0x2c];
/** Ends a value's text (but the last). */
const SEPARATOR = 0x1f;
/** Control bytes (< 0x20) never start a value's text; those below FIELDS refer to an earlier field. */
const CONTROL = 0x20;

// The values of the city being compacted ([start, end) in its JSON) and the earlier field each repeats (-1: none).
const valueStart = new Int32Array(FIELDS);
const valueEnd = new Int32Array(FIELDS);
const repeats = new Int8Array(FIELDS);

/** Whether `json` holds `key` at `at`. */
function keyAt(json: Uint8Array, at: number, key: Uint8Array): boolean {
  if (at + key.length > json.length) return false;
  for (let i = 0; i < key.length; i++) if (json[at + i] !== key[i]) return false;
  return true;
}

/** Where the JSON value starting at `at` ends: a string at its closing quote, any other at the next `,` or `}`. */
function valueEndAt(json: Uint8Array, at: number): number {
  let q = at;
  if (json[q] === QUOTE) {
    for (q++; q < json.length && json[q] !== QUOTE; q++) if (json[q] === BACKSLASH) q++;
    return q + 1;
  }
  while (q < json.length && json[q] !== COMMA && json[q] !== CLOSE) q++;
  return q;
}

function sameValue(json: Uint8Array, a: number, b: number): boolean {
  const length = valueEnd[a]! - valueStart[a]!;
  if (valueEnd[b]! - valueStart[b]! !== length) return false;
  for (let i = 0; i < length; i++) if (json[valueStart[a]! + i] !== json[valueStart[b]! + i]) return false;
  return true;
}

/** The compact length of a city's JSON, its values found (-1: it does not follow the keys). */
function split(json: Uint8Array): number {
  let at = 0;
  let length = 0;
  for (let k = 0; k < FIELDS; k++) {
    if (!keyAt(json, at, KEYS[k]!)) return -1;
    valueStart[k] = at += KEYS[k]!.length;
    valueEnd[k] = at = valueEndAt(json, at);
    if (at === valueStart[k] || at > json.length) return -1;
    // The first earlier field of the same text (compared with fields written out only).
    let repeat = -1;
    for (let j = 0; j < k && repeat < 0; j++) if (repeats[j]! < 0 && sameValue(json, j, k)) repeat = j;
    repeats[k] = repeat;
    length += repeat >= 0 ? 1 : at - valueStart[k]! + (k < FIELDS - 1 ? 1 : 0);
  }
  return at === json.length - 1 && json[at] === CLOSE ? length : -1;
}

/** The bytes a city's JSON takes compact. */
export function compactLength(json: Uint8Array): number {
  const length = split(json);
  return length < 0 ? json.length : length;
}

/** The compact city of a city's JSON (the JSON itself where it does not follow the keys). */
export function compactCity(json: Uint8Array): Uint8Array {
  const length = split(json);
  if (length < 0) return json;
  const out = new Uint8Array(length);
  let at = 0;
  for (let k = 0; k < FIELDS; k++) {
    if (repeats[k]! >= 0) {
      out[at++] = repeats[k]!;
      continue;
    }
    out.set(json.subarray(valueStart[k], valueEnd[k]), at);
    at += valueEnd[k]! - valueStart[k]!;
    if (k < FIELDS - 1) out[at++] = SEPARATOR;
  }
  return out;
}

/** Each city's compact length, by dataset position. */
export function compactLengths(count: number, json: (position: number) => Uint8Array): Uint32Array {
  const lengths = new Uint32Array(count);
  for (let p = 0; p < count; p++) lengths[p] = compactLength(json(p));
  return lengths;
}

// The scratch array a city is expanded in by the runtime's own copies (copyWithin, indexOf): in
// Node, 2.8 µs of CPU a city once optimized and 6-12 µs before, where loops of byte copies in
// JavaScript took 3.4 and 20-40 µs (a Worker's isolate answers few requests). [0, KEYS_BYTES): the
// keys one after another; then the compact city copied in, SEPARATOR after it (a search for one
// stops there); then the city expanded.
const keyStart = new Int32Array(FIELDS);
const keyEnd = new Int32Array(FIELDS);
for (let k = 0; k < FIELDS; k++) keyEnd[k] = (keyStart[k] = k ? keyEnd[k - 1]! : 0) + KEYS[k]!.length;
const KEYS_BYTES = keyEnd[FIELDS - 1]!;
let scratch: Uint8Array = withKeys(new Uint8Array(8192));
// Where each value of the city being expanded lies in the scratch array.
const expandedStart = new Int32Array(FIELDS);
const expandedEnd = new Int32Array(FIELDS);

function withKeys(array: Uint8Array): Uint8Array {
  for (let k = 0; k < FIELDS; k++) array.set(KEYS[k]!, keyStart[k]!);
  return array;
}

/** The scratch array, grown to hold at least `size` bytes (its first `kept` bytes kept). */
function grow(size: number, kept: number): Uint8Array {
  const next = new Uint8Array(Math.max(size, 2 * scratch.length));
  next.set(scratch.subarray(0, kept));
  return (scratch = next);
}

/**
 * The JSON of the city in bytes [start, end): a view of them where it is JSON (starts with `{`),
 * else the compact city expanded into the scratch array, valid until the next city is expanded
 * (copy it at once); undefined where the bytes are no compact city.
 */
export function expandCity(bytes: Uint8Array, start: number, end: number): Uint8Array | undefined {
  if (end <= start) return undefined;
  if (bytes[start] === OPEN) return bytes[end - 1] === CLOSE ? bytes.subarray(start, end) : undefined;
  const length = end - start;
  // The compact city at [KEYS_BYTES, stop), its values' texts at most `length` bytes of the city expanded.
  const stop = KEYS_BYTES + length;
  let out = scratch;
  if (2 * stop + 2 > out.length) out = grow(2 * stop + 2, KEYS_BYTES);
  out.set(bytes.subarray(start, end), KEYS_BYTES);
  out[stop] = SEPARATOR;
  const first = stop + 1;
  let at = first;
  let p = KEYS_BYTES;
  for (let k = 0; k < FIELDS; k++) {
    out.copyWithin(at, keyStart[k]!, keyEnd[k]!);
    at += keyEnd[k]! - keyStart[k]!;
    expandedStart[k] = at;
    const byte = p < stop ? out[p]! : -1;
    if (byte < CONTROL) {
      // A field's number (an earlier one), else no value at all.
      if (byte < 0 || byte >= k) return undefined;
      const from = expandedStart[byte]!;
      const to = expandedEnd[byte]!;
      // Room for this value, and for the rest at most as long as the compact city and the keys.
      if (at + to - from + stop + 1 > out.length) out = grow(at + to - from + stop + 1, at);
      out.copyWithin(at, from, to);
      at += to - from;
      p++;
    } else {
      // The last value runs to the city's end, any other to its separator.
      const last = k === FIELDS - 1;
      const separator = out.indexOf(SEPARATOR, p);
      if (last !== (separator === stop)) return undefined;
      out.copyWithin(at, p, separator);
      at += separator - p;
      p = separator + 1;
    }
    expandedEnd[k] = at;
  }
  if (p !== stop + 1 && !(p === stop && out[p - 1]! < CONTROL)) return undefined;
  out[at++] = CLOSE;
  return out.subarray(first, at);
}
