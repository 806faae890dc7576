import type { City } from './fields.js';
import type { NewCity } from './create-city.js';
import { appendCities } from './dataset-file.js';
import { readDataset } from './read-dataset.js';

/**
 * Serializes creations into the dataset file. Creations that arrive while a write is under way
 * are committed together (one append, one rebuild), so concurrent POSTs never lose a record and
 * never pay for a rebuild each.
 */
export class CityWriter {
  private pending: { city: NewCity; resolve: (c: City) => void; reject: (e: unknown) => void }[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly file: string,
    /** Called once the new dataset is on disk; resolves when answers reflect it. */
    private readonly onCommitted: () => Promise<void>,
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
        const { ids } = await readDataset(this.file);
        let id = 0;
        for (const existing of ids) id = Math.max(id, existing);
        const stamp = microTimestamps();
        const created = batch.map(({ city }) => {
          const now = stamp();
          return { id: ++id, ...city, created_at: now, updated_at: now } as City;
        });
        await appendCities(this.file, created);
        await this.onCommitted();
        batch.forEach((p, i) => p.resolve(created[i]!));
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
  }
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
