import { CitiesApiError } from '../core/errors.js';
import { CITY_FIELDS, type City } from '../core/fields.js';
import { cityJson } from '../core/json-text.js';
import { validateRecord } from '../core/validate-record.js';
import { readCsvRows } from './csv-rows.js';
import { jsonElement, jsonStyle } from './json-style.js';

// Created cities as a dataset file holds them: appended to the file's bytes as CSV rows (in its
// header's order, with its line ends) or JSON elements (laid out as the file's: json-style.ts), in pieces (the file is never read whole, nor
// decoded: only its end, and a CSV file's first line), and refused first when the reader would not
// read them back as they are.

/**
 * Refuses cities the dataset reader would not read back as they are: each record is written
 * as it will be in the file and read with the reader's own validator. `texts`: the cities
 * serialized (cityJson), when the caller has them already.
 */
export async function checkStorable(
  cities: readonly City[],
  json: boolean,
  texts: readonly string[] = cities.map((city) => cityJson(city)),
): Promise<void> {
  for (const [i, city] of cities.entries()) {
    const text = texts[i]!;
    let raw: Record<string, unknown> = {};
    if (json) raw = JSON.parse(text) as Record<string, unknown>;
    else {
      const row = `${CITY_FIELDS.join(',')}\n${csvRow(city, CITY_FIELDS)}\n`;
      await readCsvRows([Buffer.from(row)], ({ values, line }) => {
        if (line > 1) raw = Object.fromEntries(CITY_FIELDS.map((field, i) => [field, values[i]]));
      });
    }
    const result = validateRecord(raw, !json);
    if (!result.city || !sameCity(result.city, city)) {
      const why = result.problems?.map((p) => `${p.field}: ${p.reason}`).join('; ') ?? 'it reads back differently';
      throw new CitiesApiError(
        `city ${city.id} cannot be stored in the dataset as it is (${why}); nothing was written`,
      );
    }
  }
}

/**
 * Whether two cities have the same fields, as their JSON says (cityJson): numbers by Object.is,
 * since -0 is written -0.0. A field-by-field look, not a second serialization of each city.
 */
function sameCity(a: City, b: City): boolean {
  return CITY_FIELDS.every((field) => Object.is(a[field], b[field]));
}

/** A dataset's bytes as appending reads them (a staged copy of its file), a part at a time. */
export interface DatasetBytes {
  readonly size: number;
  /** Its bytes from `from` to `to` (both within size). */
  read(from: number, to: number): Promise<Buffer>;
}

/** What the dataset with cities appended holds: its first `keep` bytes, then `pieces`. */
export interface Appended {
  readonly keep: number;
  readonly pieces: readonly Buffer[];
}

/** How much of a JSON dataset's end is read first (its closing bracket is there), four times more while that is not enough. */
const TAIL_BYTES = 64 * 1024;
/** A CSV dataset's start and end are scanned (for its first and last line ends) this much at a time. */
export const SCAN_BYTES = 256 * 1024;

/** The dataset `bytes` with `cities` appended: CSV rows, or (`json`) JSON lines. */
export function appendTo(bytes: DatasetBytes, cities: readonly City[], json: boolean): Promise<Appended> {
  return json ? appendJson(bytes, cities) : appendCsv(bytes, cities);
}

/** A CSV dataset's bytes, then the cities as rows of its header's columns. */
async function appendCsv(bytes: DatasetBytes, cities: readonly City[]): Promise<Appended> {
  const { newline, crlf } = await scanCsv(bytes);
  const line = await bytes.read(0, newline < 0 ? bytes.size : newline);
  const firstLine = newline > 0 && line.at(-1) === 13 ? line.subarray(0, -1) : line;
  let header: readonly string[] = CITY_FIELDS;
  await readCsvRows([firstLine], ({ values }) => void (header = values));
  const eol = crlf ? '\r\n' : '\n';
  const rows = cities.map((city) => csvRow(city, header));
  const last = bytes.size ? (await bytes.read(bytes.size - 1, bytes.size))[0] : undefined;
  const separator = bytes.size && last !== 10 ? eol : '';
  return { keep: bytes.size, pieces: [Buffer.from(`${separator}${rows.join(eol)}${eol}`)] };
}

/**
 * Where a CSV dataset's first line ends (-1: nowhere) and whether its lines end with CRLF: its
 * first's or its last's does. Only its start and its end are read, a chunk at a time: a CRLF
 * between them is a quoted field's, or in lines written otherwise than the rest.
 */
async function scanCsv(bytes: DatasetBytes): Promise<{ newline: number; crlf: boolean }> {
  let newline = -1;
  for (let at = 0; at < bytes.size && newline < 0; at += SCAN_BYTES) {
    const found = (await bytes.read(at, Math.min(at + SCAN_BYTES, bytes.size))).indexOf(10);
    if (found >= 0) newline = at + found;
  }
  // The last line end, looked for from the end back to the first (usually in the last chunk).
  let last = newline;
  for (let end = bytes.size; newline >= 0 && last === newline && end > newline + 1; end -= SCAN_BYTES) {
    const from = Math.max(newline + 1, end - SCAN_BYTES);
    const found = (await bytes.read(from, end)).lastIndexOf(10);
    if (found >= 0) last = from + found;
  }
  const crlfAt = async (at: number) => at > 0 && (await bytes.read(at - 1, at))[0] === 13;
  return { newline, crlf: (await crlfAt(newline)) || (await crlfAt(last)) };
}

function csvRow(city: City, header: readonly string[]): string {
  return header.map((field) => csvField(csvValue(city, field))).join(',');
}

function csvValue(city: City, field: string): string {
  const value = city[field as keyof City];
  return value === null || value === undefined ? '' : String(value);
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** A JSON dataset's bytes with the cities before its closing bracket, laid out as its elements are (json-style.ts). */
async function appendJson(bytes: DatasetBytes, cities: readonly City[]): Promise<Appended> {
  for (let span = TAIL_BYTES; ; span *= 4) {
    const start = Math.max(0, bytes.size - span);
    const tail = await bytes.read(start, bytes.size);
    const end = tail.lastIndexOf(']');
    let last = end;
    // What String.prototype.trimEnd() drops that a JSON file may hold: ASCII whitespace.
    while (last > 0 && [0x20, 0x09, 0x0a, 0x0d].includes(tail[last - 1]!)) last--;
    // Enough read: the whole file, or its last bracket and the byte before the whitespace ahead of it.
    if (start > 0 && (end < 0 || last === 0)) continue;
    const empty = tail[last - 1] === 0x5b;
    // The first chunk's bytes, where its line ends are read when none is near its end (a file on one line).
    const head = () => bytes.read(0, Math.min(SCAN_BYTES, bytes.size));
    const style = await jsonStyle(tail, start, empty ? -1 : last, end, head);
    const { eol } = style;
    const items = cities.map((city) => jsonElement(city, style)).join(`,${eol}`);
    // No bracket (not a dataset: refused once read): `last` is -1, all but the last byte kept, as subarray reads it.
    const keep = start + tail.subarray(0, last).length;
    return { keep, pieces: [Buffer.from(`${empty ? '' : ','}${eol}${items}${eol}`), tail.subarray(end)] };
  }
}
