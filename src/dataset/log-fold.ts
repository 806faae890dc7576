import { realpath } from 'node:fs/promises';
import { CitiesApiError } from '../core/errors.js';
import type { CityTable } from '../core/city-table.js';
import type { City } from '../core/fields.js';
import { underDatasetLock } from '../fs/lock.js';
import { discardStaged, stageAppend } from './append-cities.js';
import { type DatasetRead, digestOf, readLogged } from './as-read.js';
import { CityLog } from './city-log.js';
import { FileIds, fileIds, type SignedIds } from './file-ids.js';
import { commitFold } from './fold-journal.js';
import { datasetSignature } from './known-ids.js';
import { checkLoggedInFile, takenIds } from './logged-in-file.js';

// The write-ahead log and the dataset file it belongs to, as the writer (logged-writer.ts) folds
// one into the other: the fold without a site build (at start, what a killed server logged; on
// close), the check every fold makes first, and what is said of cities a fold finds in neither.
// The same fold for every other reader of the dataset (build, serve --data), the check a build
// makes once done before it unmarks its site, and the logged cities validate names, writing nothing.

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
 * Returns the file's ids as the fold leaves it, with its signature then (null when the log was
 * empty: nothing read), so that the writer opening need not read the file again (KnownIds.look).
 */
export async function foldLog(
  file: string,
  target: string,
  log: CityLog,
  say: (line: string) => void,
): Promise<SignedIds | null> {
  await checkTarget(file, target, log);
  const { cities, bytes, head } = await log.read();
  if (!bytes) return log.cut(0).then(() => null);
  // Taken before its ids are read: the commit refuses if the file changed since (staged from a copy, never read here).
  const signature = await datasetSignature(target);
  // A logged city is folded in only if the file's record of its id is that city: else nothing is written, the log kept.
  const inFile = await loggedAgainst(file, log.path, cities);
  const missing = cities.filter((city) => !inFile.has(city.id));
  let now: SignedIds = { signature, ids: inFile };
  if (missing.length) {
    // The file this commit put in place, its ids known (as KnownIds.folded takes them): a change since
    // its rename is seen (its signature '' then: look() reads the file again).
    const committed = await commitFold(await stageAppend(file, missing, signature), {
      cities: missing.length,
      log: { bytes, digest: digestOf(head) },
    });
    now = { signature: committed, ids: inFile.with(missing.map((city) => city.id)) };
    say(
      `${file}: ${missing.length === 1 ? '1 city' : `${missing.length} cities`} a writable server logged (${log.path}) folded in`,
    );
  }
  await log.dropFirst(Number.MAX_SAFE_INTEGER);
  return now;
}

/** What is said of created cities found in neither the dataset file nor its log (the log deleted or cut). */
export function lostLine(lost: readonly City[], file: string, log: string): string {
  const ids = lost.map((city) => city.id).join(', ');
  const some = lost.length === 1 ? `1 created city (id ${ids}) is` : `${lost.length} created cities (ids ${ids}) are`;
  return `error: ${some} in neither ${file} nor its log ${log} (deleted or cut?): answered until the server stops, then lost`;
}

/**
 * Before a build or a server reads `file` (not a writable server's: its writer folds at open):
 * the cities a writable server logged and did not fold in (killed; or stopped, folded into the
 * file but not the site) are folded into the file, under the dataset's lock (waited for up to
 * `wait` ms), so that the dataset read is the file plus its log. No log, nothing taken or written
 * (a dataset in a read-only directory builds as before). A path that does not resolve is left to
 * the reader's own message.
 */
export async function foldLogged(file: string, wait: number, say: (line: string) => void): Promise<void> {
  const target = await realpath(file).catch(() => null);
  const log = target && CityLog.of(target);
  if (!log || !(await log.read()).bytes) return;
  await underDatasetLock(target, wait, () => foldLog(file, target, log, say));
}

/**
 * The cities `file`'s log holds that the file lacks, read without writing anything (validate); the
 * log's path; and those whose id the file holds as another record (takenIds: a fold refuses them).
 * `table`: the file as read.
 */
export async function unfolded(
  file: string,
  table: CityTable,
): Promise<{ cities: City[]; log: string; taken: ReturnType<typeof takenIds> }> {
  const log = CityLog.of(await realpath(file));
  const logged = (await log.read()).cities;
  if (!logged.length) return { cities: [], log: log.path, taken: [] };
  const inFile = FileIds.of(
    table,
    logged.map((city) => city.id),
  );
  return { cities: logged.filter((city) => !inFile.has(city.id)), log: log.path, taken: takenIds(logged, inFile) };
}

/** What `file` (its real file) holds now, to tell after a build whether it changed meanwhile (ifUnchanged). */
export async function datasetState(file: string): Promise<string> {
  return datasetSignature(await realpath(file));
}

/**
 * Under the dataset's lock: runs `task` if the dataset is still what a build read, its file as
 * `state` says and its log empty, so that the site built from it holds every city of it; a
 * writable server marks its site behind and logs its cities under this lock, so none comes
 * between the check and the task. Returns whether it ran.
 */
export async function ifUnchanged(
  file: string,
  state: string,
  wait: number,
  task: () => Promise<void>,
): Promise<boolean> {
  const target = await realpath(file);
  return underDatasetLock(target, wait, async () => {
    const same = (await datasetSignature(target)) === state && !(await CityLog.of(target).read()).bytes;
    if (same) await task();
    return same;
  });
}

/**
 * The dataset as a server that does not write it reads it (serve --watch without --writable,
 * following a writable server of another site): the file plus the cities its log holds that the
 * file lacks, staged beside it, never written over it (folding is the writable server's, under
 * the lock its POSTs wait for). `read`: what a build of it holds (as-read.ts), taken as it is read;
 * `discard` removes what was staged (its own file, named for its writer: dataset-temp.ts). A logged
 * city whose id the file holds as another record is refused as a fold refuses it (LoggedIdTaken),
 * nothing staged: taken as in the file, it was left out of the answers, unsaid.
 */
export async function withLogged(
  file: string,
): Promise<{ path: string; read: DatasetRead; discard: () => Promise<void> }> {
  const target = await realpath(file);
  const log = CityLog.of(target);
  const { cities, read } = await readLogged(target, log);
  const inFile = cities.length ? await loggedAgainst(file, log.path, cities) : null;
  const missing = inFile ? cities.filter((city) => !inFile.has(city.id)) : [];
  if (!missing.length) return { path: file, read, discard: async () => {} };
  // A copy of the file, then the cities: this thread never holds the whole dataset (70 MB at 140,000 cities).
  const staged = await stageAppend(file, missing);
  return { path: staged.temp, read, discard: () => discardStaged(staged) };
}

/**
 * Refuses (LoggedIdTaken) a dataset whose log holds a city whose id the file holds as another
 * record, as a fold would; writes nothing, reads nothing of the file while the log is empty. For a
 * build of the file alone beside a writable server's log (serve --writable --watch): a site holding
 * that record in place of the logged city drops the city from the server's answers (its unbuilt
 * cities go once a site holds their ids).
 */
export async function checkLogged(file: string): Promise<void> {
  const log = CityLog.of(await realpath(file));
  const { cities } = await log.read();
  if (cities.length) await loggedAgainst(file, log.path, cities);
}

/** The file's ids (off this thread when it is large: fileIds), once its records of the logged ids are checked to be those cities (checkLoggedInFile). */
async function loggedAgainst(file: string, log: string, logged: readonly City[]): Promise<FileIds> {
  const inFile = await fileIds(
    file,
    logged.map((city) => city.id),
  );
  checkLoggedInFile(file, log, logged, inFile);
  return inFile;
}

/** A build's files not swapped in: the dataset changed after the build read it (a writable server folding or logging cities, an edit). */
export class DatasetMoved extends CitiesApiError {
  constructor(readonly file: string) {
    super(`${file} changed while the site was built from it: its files were not swapped in (they lacked the change)`);
  }
}
