import { isUtf8 } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { CsvSyntaxError, readCsvRows } from './csv-rows.js';
import { CitiesApiError, formatProblem, type Problem } from './errors.js';
import { CITY_FIELDS, type City } from './fields.js';
import { validateRecord, type RawRecord } from './validate-record.js';

export const MAX_LISTED_PROBLEMS = 50;

/**
 * Reads and validates a dataset (`.csv` or `.json`). An invalid dataset is refused as a whole:
 * one CitiesApiError listing every problem with file, line or record, field, value and reason.
 */
export async function readDataset(file: string): Promise<City[]> {
  const format = extname(file).toLowerCase();
  if (format !== '.csv' && format !== '.json') {
    throw new CitiesApiError(`${file}: unsupported dataset type "${format || '(none)'}": use a .csv or .json file`);
  }
  let buffer: Buffer;
  try {
    buffer = await readFile(file);
  } catch (error) {
    throw new CitiesApiError(`cannot read dataset ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const problems: Problem[] = [];
  const badByte = firstInvalidUtf8(buffer);
  const cities =
    badByte >= 0
      ? (problems.push({ line: lineOf(buffer, badByte), reason: `is not valid UTF-8 (byte 0x${buffer[badByte]!.toString(16)} at offset ${badByte})` }), [])
      : format === '.csv'
        ? await citiesFromCsv(buffer, problems)
        : citiesFromJson(buffer.toString('utf8').replace(/^\uFEFF/, ''), problems);
  if (problems.length === 0) checkUniqueIds(cities, problems);
  if (problems.length) throw datasetError(file, problems);
  return cities.map((c) => c.city);
}

type Where = Omit<Problem, 'reason'>;
interface Located { city: City; where: Where }

async function citiesFromCsv(buffer: Buffer, problems: Problem[]): Promise<Located[]> {
  const cities: Located[] = [];
  let header: readonly string[] | undefined;
  let headerOk = true;
  try {
    await readCsvRows(buffer, ({ line, values }) => {
      if (!header) {
        header = values;
        const found = headerProblems(header);
        headerOk = !found.length;
        problems.push(...found.map((reason) => ({ line, reason })));
      } else if (!headerOk) {
        return;
      } else if (values.length !== header.length) {
        problems.push({ line, reason: `has ${values.length} fields, the header has ${header.length}` });
      } else {
        const raw: Record<string, string> = {};
        header.forEach((name, i) => (raw[name] = values[i]!));
        collect(validateRecord(raw, true), { line }, cities, problems);
      }
    });
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    problems.push({ line: error.line, reason: error.message });
  }
  if (!header && !problems.length) problems.push({ line: 1, reason: 'has no header row (expected id,name_ar,...,updated_at)' });
  return cities;
}

function headerProblems(header: readonly string[]): string[] {
  const known = CITY_FIELDS as readonly string[];
  const list = (names: string[]) => [...new Set(names)].map((n) => JSON.stringify(n)).join(', ');
  const missing = known.filter((name) => !header.includes(name));
  const unknown = header.filter((name) => !known.includes(name));
  const repeated = header.filter((name, i) => header.indexOf(name) !== i);
  return [
    ...(missing.length ? [`header: missing column${missing.length > 1 ? 's' : ''} ${list(missing)}`] : []),
    ...(unknown.length ? [`header: unknown column${unknown.length > 1 ? 's' : ''} ${list(unknown)} (expected ${known.join(',')})`] : []),
    ...(repeated.length ? [`header: column${repeated.length > 1 ? 's' : ''} ${list(repeated)} appear${repeated.length > 1 ? '' : 's'} more than once`] : []),
  ];
}

function citiesFromJson(text: string, problems: Problem[]): Located[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message);
    const line = position ? text.slice(0, Number(position[1])).split('\n').length : undefined;
    problems.push({ ...(line ? { line } : {}), reason: `is not valid JSON: ${message}` });
    return [];
  }
  if (!Array.isArray(data)) {
    problems.push({ reason: 'must hold a JSON array of city objects' });
    return [];
  }
  const cities: Located[] = [];
  data.forEach((record: unknown, index) => {
    const id = isObject(record) ? record.id : undefined;
    const where: Where = { index, ...(id !== undefined ? { id } : {}) };
    if (!isObject(record)) problems.push({ ...where, reason: 'must be a JSON object' });
    else collect(validateRecord(record, false), where, cities, problems);
  });
  return cities;
}

function isObject(value: unknown): value is RawRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function collect(result: ReturnType<typeof validateRecord>, where: Where, cities: Located[], problems: Problem[]): void {
  if (result.city) cities.push({ city: result.city, where });
  else for (const p of result.problems) problems.push({ ...where, ...p });
}

function checkUniqueIds(cities: readonly Located[], problems: Problem[]): void {
  const first = new Map<number, Where>();
  for (const { city, where } of cities) {
    const earlier = first.get(city.id);
    if (!earlier) first.set(city.id, where);
    else {
      const at = earlier.line !== undefined ? `line ${earlier.line}` : `record ${earlier.index}`;
      problems.push({ ...where, field: 'id', value: city.id, reason: `duplicates the id of ${at}` });
    }
  }
}

function datasetError(file: string, problems: Problem[]): CitiesApiError {
  const located = problems.map((p) => ({ ...p, file }));
  const shown = located.slice(0, MAX_LISTED_PROBLEMS).map((p) => `  ${formatProblem(p)}`);
  const more = located.length > MAX_LISTED_PROBLEMS ? [`  ... and ${located.length - MAX_LISTED_PROBLEMS} more`] : [];
  const noun = located.length === 1 ? 'problem' : 'problems';
  return new CitiesApiError([`invalid dataset ${file} (${located.length} ${noun}; nothing was written):`, ...shown, ...more].join('\n'), 1, located);
}

/** Offset of the first byte that is not valid UTF-8, or -1. */
function firstInvalidUtf8(buffer: Buffer): number {
  if (isUtf8(buffer)) return -1;
  const decodes = (length: number) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  let lo = 0, hi = buffer.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (decodes(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

function lineOf(buffer: Buffer, offset: number): number {
  let line = 1;
  for (let i = buffer.indexOf(10); i >= 0 && i < offset; i = buffer.indexOf(10, i + 1)) line++;
  return line;
}
