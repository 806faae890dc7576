import { type Stats, statSync } from 'node:fs';
import type { City } from '../core/fields.js';
import type { CityLog } from './city-log.js';
import { type FileIds, fileIds, type SignedIds } from './file-ids.js';
import { checkLoggedInFile, takenIds } from './logged-in-file.js';

/**
 * Which ids a dataset file and its log hold, as this process last saw them: their signatures,
 * the largest id in either and the largest in the file. Read again only when another process
 * changed either; this process's own appends and folds update it as they go.
 */
export class KnownIds {
  /** `trusted`: every logged id up to fileLastId is in the file (false once the file, changed by someone else, holds larger ids than some logged city). */
  private seen = { dataset: '', log: '', lastId: 0, fileLastId: 0, trusted: true };

  constructor(
    private readonly file: string,
    private readonly target: string,
    private readonly logFile: CityLog,
  ) {}

  /** The largest id in the dataset file and the log. */
  get lastId(): number {
    return this.seen.lastId;
  }

  /**
   * Under the dataset's lock: the largest id in the dataset and the log, read again only if another
   * process changed either. `read`: the file's ids a fold just read (foldLog), used instead of a
   * read while the file still has the signature they were read at.
   */
  async look(read?: SignedIds | null): Promise<void> {
    const [dataset, log] = [await datasetSignature(this.target), await this.logFile.signature()];
    if (dataset === this.seen.dataset && log === this.seen.log) return;
    const { cities, bytes } = await this.logFile.read();
    // Read and validated off this thread when large (fileIds): the server answers meanwhile.
    const ids = read?.signature === dataset ? read.ids : await fileIds(this.file, idsOf(cities));
    await this.logFile.cut(bytes);
    const fileLastId = ids.last;
    let lastId = fileLastId;
    for (const city of cities) lastId = Math.max(lastId, city.id);
    // A logged id someone else's row took: not in the file as that city (datasetNow reads it again, and refuses).
    const trusted = loggedPastFile(cities, ids) && !takenIds(cities, ids).length;
    this.seen = { dataset, log: await this.logFile.signature(), lastId, fileLastId, trusted };
  }

  /** Under the lock, after this process appended cities up to `lastId` to the log. */
  async logged(lastId: number): Promise<void> {
    this.seen = { ...this.seen, log: await this.logFile.signature(), lastId };
  }

  /**
   * Under the lock, after this process folded `missing` into a file whose largest id was
   * `fileLastId` and dropped them from the log. `committed`: the new file's signature as
   * commitStaged put it in place ('' if someone changed it since: it is read again), null when none was.
   */
  async folded(missing: readonly City[], fileLastId: number, committed: string | null): Promise<void> {
    // The file is what it was and the cities folded in: any id in it is known now.
    let newFileLastId = fileLastId;
    for (const city of missing) newFileLastId = Math.max(newFileLastId, city.id);
    let lastId = Math.max(this.seen.lastId, newFileLastId);
    // What the log holds now was logged since it was read for this fold, by this process or by
    // another server on the file (while this one built): its ids count too, the log taken as known.
    for (const city of (await this.logFile.read()).cities) lastId = Math.max(lastId, city.id);
    const dataset = committed ?? this.seen.dataset;
    // What was logged before the fold is in the file now; what was logged since is past every id in it.
    this.seen = { dataset, log: await this.logFile.signature(), lastId, fileLastId: newFileLastId, trusted: true };
  }

  /**
   * The dataset file's signature (datasetSignature), its largest id, and which logged ids it
   * holds; nothing of it read here. Unchanged since this process last saw it: a logged id is in it
   * only if not past its largest id, since ids are chosen past it and only our commits add them
   * (not so once someone else added larger ids while cities were logged: `trusted` is false then).
   * Changed by another process: read and validated whole, in a thread of its own when large
   * (fileIds); the signature is taken first, so that a change made while it is read is one too.
   * `logged`: the log's cities; one whose id the file holds as another record is refused (LoggedIdTaken).
   */
  async datasetNow(
    logged: readonly City[],
  ): Promise<{ signature: string; fileLastId: number; inFile: (id: number) => boolean }> {
    const { dataset, fileLastId, trusted } = this.seen;
    const signature = await datasetSignature(this.target);
    if (trusted && signature === dataset) return { signature, fileLastId, inFile: (id) => id <= fileLastId };
    const ids = await fileIds(this.file, idsOf(logged));
    // A logged city is in the file only as itself: another record with its id is refused (the log kept).
    checkLoggedInFile(this.file, this.logFile.path, logged, ids);
    return { signature, fileLastId: ids.last, inFile: (id) => ids.has(id) };
  }
}

const idsOf = (cities: readonly City[]) => cities.map((city) => city.id);

/** Whether every logged city is either in the file or past its largest id (so that `id <= fileLastId` says which are in it). */
function loggedPastFile(logged: readonly City[], inFile: FileIds): boolean {
  return logged.every((city) => city.id > inFile.last || inFile.has(city.id));
}

/** What identifies the real dataset file's content now. Synchronous: a POST reads it, and libuv's thread pool may be busy with a build's writes. */
export async function datasetSignature(target: string): Promise<string> {
  return signatureOf(statSync(target));
}

/** A dataset file's signature (datasetSignature) from its stats. */
export const signatureOf = ({ ino, size, mtimeMs, ctimeMs }: Stats) => `${ino}:${size}:${mtimeMs}:${ctimeMs}`;
