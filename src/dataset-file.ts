import { copyFile, link, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { readCsvRows } from './csv-rows.js';
import { CITY_FIELDS, type City } from './fields.js';
import { cityJson } from './json-text.js';
import { isAlive } from './site-lock.js';

/**
 * Appends cities to a dataset file without disturbing what is there: the new text is written to
 * a temporary file, fsynced, and renamed over the old one (which is first kept as FILE.bak,
 * itself replaced by a rename), so the file and its backup are always complete datasets.
 */
export async function appendCities(file: string, cities: readonly City[]): Promise<void> {
  const text = await readFile(file);
  const next = extname(file).toLowerCase() === '.json' ? appendJson(text.toString('utf8'), cities) : await appendCsv(text, cities);
  await replaceAtomically(file, next);
}

async function appendCsv(text: Buffer, cities: readonly City[]): Promise<string> {
  const newline = text.indexOf(10);
  const firstLine = text.subarray(0, newline < 0 ? text.length : newline > 0 && text[newline - 1] === 13 ? newline - 1 : newline);
  let header: readonly string[] = CITY_FIELDS;
  await readCsvRows([firstLine], ({ values }) => void (header = values));
  const source = text.toString('utf8');
  const eol = source.includes('\r\n') ? '\r\n' : '\n';
  const rows = cities.map((city) => header.map((field) => csvField(csvValue(city, field))).join(','));
  const separator = source.length && !source.endsWith('\n') ? eol : '';
  return `${source}${separator}${rows.join(eol)}${eol}`;
}

function csvValue(city: City, field: string): string {
  const value = city[field as keyof City];
  return value === null || value === undefined ? '' : String(value);
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function appendJson(source: string, cities: readonly City[]): string {
  const end = source.lastIndexOf(']');
  const before = source.slice(0, end).trimEnd();
  const empty = before.endsWith('[');
  const items = cities.map((city) => `  ${cityJson(city)}`).join(',\n');
  return `${before}${empty ? '' : ','}\n${items}\n${source.slice(end)}`;
}

async function replaceAtomically(file: string, content: string): Promise<void> {
  const dir = dirname(file);
  await removeDeadTemps(dir, basename(file));
  const temp = join(dir, `.${basename(file)}.tmp-${process.pid}`);
  const backup = join(dir, `.${basename(file)}.bak-${process.pid}`);
  const handle = await open(temp, 'w');
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rm(backup, { force: true });
    await link(file, backup).catch(() => copyFile(file, backup));
    await rename(backup, `${file}.bak`);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    await rm(backup, { force: true });
    throw error;
  }
  const dirHandle = await open(dir, 'r');
  await dirHandle.sync().finally(() => dirHandle.close());
}

/** Temporary files left beside the dataset by writers that were killed. */
async function removeDeadTemps(dir: string, name: string): Promise<void> {
  for (const entry of await readdir(dir)) {
    const match = entry.startsWith(`.${name}.`) ? /\.(?:tmp|bak)-(\d+)$/.exec(entry) : null;
    if (match && Number(match[1]) !== process.pid && !isAlive(Number(match[1]))) await rm(join(dir, entry), { force: true });
  }
}
