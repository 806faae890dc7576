import { realpath } from 'node:fs/promises';
import { CitiesApiError } from '../core/errors.js';
import type { City } from '../core/fields.js';
import { commitStaged, stageAppend } from './append-cities.js';
import type { CityLog } from './city-log.js';
import { readDataset } from './read-dataset.js';

// The write-ahead log and the dataset file it belongs to, as the writer (logged-writer.ts) folds
// one into the other: the fold without a site build (at start, what a killed server logged; on
// close), the check every fold makes first, and what is said of cities a fold finds in neither.

/** Refuses a dataset path that is a link pointed at another file than `target`, the one the writer opened: its log, lock and ids are that file's. */
export async function checkTarget(file: string, target: string, log: CityLog): Promise<void> {
  const now = await realpath(file).catch(() => target);
  if (now !== target)
    throw new CitiesApiError(
      `${file} now links to ${now}, not to ${target}, which this server adds cities to (those created since it started are logged in ${log.path}): point it back, stop the server (they are folded in), then point it elsewhere and start the server again`,
    );
}

/**
 * Under the dataset's lock: the logged cities the dataset file lacks are appended to it (no
 * build), and the log emptied (only cut when it held no whole record). The site's files still lack
 * them: the writer keeps those it logged as unbuilt, and its site behind, for as long as it runs.
 */
export async function foldLog(file: string, target: string, log: CityLog, say: (line: string) => void): Promise<void> {
  await checkTarget(file, target, log);
  const { cities, bytes } = await log.read();
  if (!bytes) return log.cut(0);
  const inFile = new Set((await readDataset(file)).ids);
  const missing = cities.filter((city) => !inFile.has(city.id));
  if (missing.length) {
    await commitStaged(await stageAppend(file, missing));
    say(`${file}: ${missing.length} logged cities folded in`);
  }
  await log.dropFirst(Number.MAX_SAFE_INTEGER);
}

/** What is said of created cities found in neither the dataset file nor its log (the log deleted or cut). */
export function lostLine(lost: readonly City[], file: string, log: string): string {
  const ids = lost.map((city) => city.id).join(', ');
  const some = lost.length === 1 ? `1 created city (id ${ids}) is` : `${lost.length} created cities (ids ${ids}) are`;
  return `error: ${some} in neither ${file} nor its log ${log} (deleted or cut?): answered until the server stops, then lost`;
}
