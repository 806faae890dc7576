import { constants } from 'node:fs';
import { access, realpath } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import { underDatasetLock } from '../fs/lock.js';
import type { City } from '../core/fields.js';
import { CityLog } from './city-log.js';
import { foldsBetween } from './fold-journal.js';
import { datasetSignature } from './known-ids.js';

// What a build read of a dataset (its file, and the part of its write-ahead log the site built
// from it holds), and, under the dataset's lock at the build's swap, how the dataset is now
// against it: the one check every build that swaps files into a site makes (app/behind-site.ts).

/**
 * What a build read, taken before it read: the real file's signature (ino, size, times) and the
 * first `bytes` of the log the build holds, their digest (none for a build of the file alone).
 * Plain data: it crosses to a build's thread.
 */
export interface DatasetRead {
  readonly file: string;
  readonly log: { readonly bytes: number; readonly digest: string };
}

/**
 * The dataset now, against what a build read: `current`, the build holds every city of it;
 * `grown`, it holds every city the build holds, and cities logged since: the log holds what the
 * build holds plus more, or the file is the one read plus cities folded into it from the log
 * (a writable server's folds, recorded: fold-journal.ts); `moved`, anything else (the file edited
 * or replaced; the log cut, or folded where no record says so).
 */
export type SinceRead = 'current' | 'grown' | 'moved';

/** How the dataset is against what a build read, and how many cities it holds that the build lacks (grown). */
export interface Since {
  readonly since: SinceRead;
  readonly cities: number;
}

/** The digest of a log's head (its whole records' bytes), as a read and a fold record it. */
export const digestOf = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const MOVED: Since = { since: 'moved', cities: 0 };
const NONE = { bytes: 0, digest: digestOf(Buffer.alloc(0)) };

/** The records in whole lines of a log. */
const records = (lines: Buffer) => {
  let count = 0;
  for (let at = lines.indexOf(0x0a); at >= 0; at = lines.indexOf(0x0a, at + 1)) count++;
  return count;
};

/** Whether a log's `head` begins with the part `part` says (its bytes and digest). */
const startsWith = (head: Buffer, part: DatasetRead['log']) => digestOf(head.subarray(0, part.bytes)) === part.digest;

/** What a build of the dataset file alone reads (it holds none of the log): taken before it reads the file. */
export async function readFileOnly(file: string): Promise<DatasetRead> {
  const signature = await datasetSignature(await realpath(file));
  return { file: signature, log: NONE };
}

/**
 * The log's records, and what a build holding the file plus those records read: the file's
 * signature is taken first, so a change to the file after it is seen at the swap.
 */
export async function readLogged(
  target: string,
  log: CityLog,
): Promise<{ cities: City[]; bytes: number; read: DatasetRead }> {
  const file = await datasetSignature(target);
  const { cities, bytes, head } = await log.read();
  return { cities, bytes, read: { file, log: { bytes, digest: digestOf(head) } } };
}

/** How the dataset `file` is now against `read` (see SinceRead); to be called holding its lock (underLock). */
export async function sinceRead(file: string, read: DatasetRead): Promise<Since> {
  const target = await realpath(file);
  const now = await datasetSignature(target);
  let held = read.log;
  let folded = 0;
  // The head of the log the last fold since the read dropped: still there if it was killed (or failed) before the drop.
  let foldedHead = NONE;
  if (now !== read.file) {
    const folds = await foldsBetween(target, read.file, now);
    // The part of the log the build holds went into the file with the first fold (those cities the build holds), or it held none.
    const first = folds?.[0]?.log;
    if (!folds || (held.bytes && (first?.bytes !== held.bytes || first.digest !== held.digest))) return MOVED;
    folded = folds.slice(held.bytes ? 1 : 0).reduce((sum, fold) => sum + fold.cities, 0);
    held = NONE;
    foldedHead = folds.at(-1)!.log;
  }
  // Whole records only: under this lock no writer is mid-append, so a torn write is a killed one's, never acknowledged.
  const { bytes, head } = await CityLog.of(target).read();
  if (bytes < held.bytes || !startsWith(head, held)) return MOVED;
  // Those records are in the file (counted in `folded`, or held): not counted again. No record is logged twice (ids).
  const dropped = foldedHead.bytes && bytes >= foldedHead.bytes && startsWith(head, foldedHead);
  const cities = folded + records(head.subarray(dropped ? foldedHead.bytes : held.bytes));
  return { since: cities ? 'grown' : 'current', cities };
}

/**
 * `task` run holding the dataset's lock (waited for up to `wait` ms), under which a writable
 * server logs and folds its cities: none comes between a check and what follows it. A dataset in
 * a directory this process cannot write (read-only, another user's): no lock can be put beside
 * it, and no writable server of this user logs there; run without one.
 */
export async function underLock<T>(file: string, wait: number, task: () => Promise<T>): Promise<T> {
  const target = await realpath(file);
  const writable = await access(dirname(target), constants.W_OK).then(
    () => true,
    () => false,
  );
  return writable ? underDatasetLock(target, wait, task) : task();
}
