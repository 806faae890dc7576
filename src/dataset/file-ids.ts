import { stat } from 'node:fs/promises';
import type { City } from '../core/fields.js';
import type { CityTable } from '../core/city-table.js';
import type { Silent } from '../proc/channel.js';
import { startThread } from '../proc/workers.js';
import { readDataset } from './read-dataset.js';

// The ids a dataset file holds, for a reader that needs no more of it (which logged cities the file
// lacks): a large file is read and validated in a thread of its own, at the lowest priority, so
// that the thread answering requests is never held by it (issue #26: 140,000 cities took seconds),
// and its ids sorted there: asked about a few ids, this thread never goes through them all.

/** Files from this size are read in a thread (as builds are: app/build.ts); below it, starting one costs more than the read. */
export const IDS_THREAD_FROM = 1024 * 1024;

/** What fileIds()'s thread is asked: the file, and the few ids whose records are wanted too (logged cities). */
export interface IdsAsked {
  readonly file: string;
  readonly wanted: readonly number[];
}

/** fileIds()'s thread (ids-worker.ts): one call, the ids of a file, sorted, and its records of the ids asked for. */
export interface IdsProtocol {
  readonly parent: Silent;
  readonly worker: {
    readonly calls: { ids(asked: IdsAsked): { sorted: Float64Array; records: City[] } };
    readonly events: Record<never, never>;
  };
}

/**
 * A dataset file's ids, sorted: its largest and whether it holds an id, each found without going
 * through them all (a Set of 140,000 ids took ~80 ms of this thread to build).
 */
export class FileIds {
  /** `sorted`: ascending (sortedIds); `records`: the file's records of the ids asked for (fileIds' `wanted`) that it holds. */
  constructor(
    private readonly sorted: Float64Array,
    readonly records: ReadonlyMap<number, City> = new Map(),
  ) {}

  /** The ids of a dataset as read (`table`), and its records of the ids `wanted`. */
  static of(table: CityTable, wanted: readonly number[] = []): FileIds {
    return FileIds.from(sortedIds(table.ids), recordsOf(table, wanted));
  }

  /** `sorted` ids and `records` of some of them. */
  static from(sorted: Float64Array, records: readonly City[]): FileIds {
    return new FileIds(sorted, new Map(records.map((city) => [city.id, city])));
  }

  /** The largest id in the file, 0 if none is larger (ids are chosen past it: from 1 at least). */
  get last(): number {
    return Math.max(0, this.sorted.at(-1) ?? 0);
  }

  has(id: number): boolean {
    let [low, high] = [0, this.sorted.length];
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.sorted[middle]! < id) low = middle + 1;
      else high = middle;
    }
    return this.sorted[low] === id;
  }

  /** These ids and `more` (none of them among these), sorted: the file's once `more` are appended, not read again. */
  with(more: readonly number[]): FileIds {
    const added = Float64Array.from(more).sort();
    const all = new Float64Array(this.sorted.length + added.length);
    // A merge of two sorted arrays: a few added to 140,000 take a pass, not a sort.
    for (let i = 0, j = 0, k = 0; k < all.length; k++)
      all[k] =
        j === added.length || (i < this.sorted.length && this.sorted[i]! <= added[j]!)
          ? this.sorted[i++]!
          : added[j++]!;
    return new FileIds(all);
  }
}

/** A dataset file's ids, read or known while its real file had `signature` (datasetSignature): good while it still has it. */
export interface SignedIds {
  readonly signature: string;
  readonly ids: FileIds;
}

/** A copy of a table's ids, in ascending order (a typed array sorts by value). */
export function sortedIds(ids: Float64Array): Float64Array {
  return ids.slice().sort();
}

/** The records `table` holds of the ids `wanted` (a few: gone through once, off the answering thread when large). */
export function recordsOf(table: CityTable, wanted: readonly number[]): City[] {
  if (!wanted.length) return [];
  const asked = new Set(wanted);
  const records: City[] = [];
  for (let i = 0; i < table.count; i++) if (asked.has(table.ids[i]!)) records.push(table.city(i));
  return records;
}

/**
 * The ids `file` holds (read and validated whole: an invalid file throws readDataset's error), off
 * this thread when large; and its records of the ids `wanted` (logged cities: is the file's record
 * the city logged, or a row of someone else's with its id?), read in the same pass.
 */
export async function fileIds(file: string, wanted: readonly number[] = []): Promise<FileIds> {
  const { size } = await stat(file);
  if (size < IDS_THREAD_FROM) return FileIds.of(await readDataset(file), wanted);
  const thread = startThread<IdsProtocol>('dataset/ids-worker', {
    name: `the read of ${file}'s ids`,
    lowest: true,
    // Its objects that live are the table's few large buffers (as a build's: build-thread.ts).
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  try {
    const { sorted, records } = await thread.call('ids', { file, wanted });
    return FileIds.from(sorted, records);
  } finally {
    await thread.stop();
  }
}
