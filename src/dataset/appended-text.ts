import { CitiesApiError } from '../core/errors.js';
import { CITY_FIELDS, type City } from '../core/fields.js';
import { cityJson } from '../core/json-text.js';
import { validateRecord } from '../core/validate-record.js';
import { readCsvRows } from './csv-rows.js';

// Created cities as a dataset file holds them: appended to the file's bytes as CSV rows (in its
// header's order, with its line ends) or JSON lines, in pieces (the file is never decoded whole),
// and refused first when the reader would not read them back as they are.

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

/** A CSV dataset's bytes, then the cities as rows of its header's columns. */
export async function appendCsv(text: Buffer, cities: readonly City[]): Promise<Buffer[]> {
  const newline = text.indexOf(10);
  const firstLine = text.subarray(
    0,
    newline < 0 ? text.length : newline > 0 && text[newline - 1] === 13 ? newline - 1 : newline,
  );
  let header: readonly string[] = CITY_FIELDS;
  await readCsvRows([firstLine], ({ values }) => void (header = values));
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const rows = cities.map((city) => csvRow(city, header));
  const separator = text.length && text.at(-1) !== 10 ? eol : '';
  return [text, Buffer.from(`${separator}${rows.join(eol)}${eol}`)];
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

/** A JSON dataset's bytes with the cities before its closing bracket, a line each. */
export function appendJson(source: Buffer, cities: readonly City[]): Buffer[] {
  const end = source.lastIndexOf(']');
  let last = end;
  // What String.prototype.trimEnd() drops that a JSON file may hold: ASCII whitespace.
  while (last > 0 && [0x20, 0x09, 0x0a, 0x0d].includes(source[last - 1]!)) last--;
  const empty = source[last - 1] === 0x5b;
  const items = cities.map((city) => `  ${cityJson(city)}`).join(',\n');
  return [source.subarray(0, last), Buffer.from(`${empty ? '' : ','}\n${items}\n`), source.subarray(end)];
}
