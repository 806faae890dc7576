import { readFile, realpath } from 'node:fs/promises';
import type { City } from '../core/fields.js';
import type { NewCity } from '../post/create-city.js';
import { CreateRefused, type CityStore } from '../post/city-store.js';
import { commitStaged, DatasetChanged, discardStaged, stageAppend } from './append-cities.js';
import { readDataset } from './read-dataset.js';
import { lockDataset, LockBusyError, whileBusy } from '../fs/lock.js';

export interface WriterOptions {
  /**
   * Makes the answers come from a dataset file (the staged new dataset, or the dataset itself);
   * rejects, leaving what is answered unchanged, when it cannot.
   */
  readonly publish: (file: string) => Promise<void>;
  /** How long a creation waits for a lock another process holds (ms). */
  readonly lockWait: number;
  readonly log?: (line: string) => void;
}

/**
 * Serializes creations into the dataset file. Creations that arrive while a write is under way
 * are committed together (one append, one rebuild), so concurrent POSTs never lose a record and
 * never pay for a rebuild each. A commit holds the dataset's lock (so servers in other processes
 * never choose the same id) and replaces the file only once the site built from the new dataset
 * answers: a creation is either in the file and answered, or nowhere.
 */
export class CityWriter implements CityStore {
  private pending: { city: NewCity; resolve: (c: City) => void; reject: (e: unknown) => void }[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly file: string,
    private readonly options: WriterOptions,
  ) {}

  create(city: NewCity): Promise<City> {
    return new Promise((resolve, reject) => {
      this.pending.push({ city, resolve, reject });
      this.running ??= this.drain().finally(() => (this.running = null));
    });
  }

  /** Resolves once every creation queued so far is committed (or failed). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending;
      this.pending = [];
      try {
        const { created, lastId } = await this.commit(batch.map(({ city }) => city));
        batch.forEach((p, i) => (i < created.length ? p.resolve(created[i]!) : p.reject(idsExhausted(lastId))));
      } catch (error) {
        for (const p of batch) p.reject(this.refusal(error));
      }
    }
  }

  private async commit(cities: readonly NewCity[]): Promise<{ created: City[]; lastId: number }> {
    const target = await realpath(this.file);
    const release = await whileBusy(() => lockDataset(target), this.options.lockWait);
    try {
      const before = await readFile(target);
      const { ids } = await readDataset(this.file);
      if (!(await readFile(target)).equals(before)) throw new DatasetChanged(target);
      let id = 0;
      for (const existing of ids) id = Math.max(id, existing);
      // Ids past 2^53-1 are not exact in JSON clients (nor read by our reader): refused, not written.
      const room = Math.min(cities.length, Number.MAX_SAFE_INTEGER - id);
      if (room <= 0) return { created: [], lastId: id };
      const stamp = microTimestamps();
      const created = cities.slice(0, room).map((city) => {
        const now = stamp();
        return { id: ++id, ...city, created_at: now, updated_at: now } as City;
      });
      const staged = await stageAppend(this.file, created, before);
      try {
        await this.options.publish(staged.temp);
      } catch (error) {
        await discardStaged(staged);
        throw error;
      }
      try {
        await commitStaged(staged);
      } catch (error) {
        // The site already answers with the new cities, which are not in the file: back to what the file holds.
        await this.options
          .publish(this.file)
          .catch((rollback: Error) =>
            this.options.log?.(
              `error: ${this.file} was not changed, but the site could not be rebuilt from it: ${rollback.message}`,
            ),
          );
        throw error;
      }
      return { created, lastId: id };
    } finally {
      // Committed or not, the answer stands: a lock file left behind is taken over by the next writer.
      await release().catch((error: Error) =>
        this.options.log?.(`error: could not release the lock of ${target}: ${error.message}`),
      );
    }
  }

  private refusal(error: unknown): unknown {
    const retryAfter = Math.max(1, Math.ceil(this.options.lockWait / 1000));
    if (error instanceof LockBusyError) {
      this.options.log?.(`POST refused (503): ${error.message}`);
      return new CreateRefused(
        503,
        `Another process is updating this data; nothing was written. Try again in ${retryAfter} s.`,
        retryAfter,
      );
    }
    if (error instanceof DatasetChanged) {
      this.options.log?.(`POST refused (503): ${error.message}`);
      return new CreateRefused(
        503,
        'The data changed while the city was being added; nothing was written. Try again.',
        1,
      );
    }
    return error;
  }
}

function idsExhausted(lastId: number): CreateRefused {
  return new CreateRefused(
    500,
    `No id is left for a new city: the largest id in use is ${lastId}, and ids stop at ${Number.MAX_SAFE_INTEGER} (2^53-1, the largest integer JSON clients read exactly). Nothing was written.`,
  );
}

/** A source of `YYYY-MM-DDTHH:MM:SS.ffffffZ` timestamps of now, strictly increasing. */
function microTimestamps(): () => string {
  let last = 0;
  return () => {
    const micros = Math.max(Math.floor((performance.timeOrigin + performance.now()) * 1000), last + 1);
    last = micros;
    const date = new Date(Math.floor(micros / 1000)).toISOString();
    return `${date.slice(0, 19)}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
  };
}
