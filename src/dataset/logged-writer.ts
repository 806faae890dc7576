import { statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { City } from '../core/fields.js';
import { CreateRefused, type CityStore } from '../post/city-store.js';
import type { NewCity } from '../post/create-city.js';
import { checkStorable, commitStaged, DatasetChanged, discardStaged, stageAppend } from './append-cities.js';
import { CityLog } from './city-log.js';
import { readDataset, readDatasetBytes } from './read-dataset.js';
import { lockDataset, LockBusyError, whileBusy } from '../fs/lock.js';

export interface LoggedWriterOptions {
  /** Puts created cities in what every server process answers; a POST is acknowledged once it resolves. */
  readonly apply: (cities: readonly City[]) => Promise<void>;
  /** Rebuilds the site from a dataset file and answers from it (the background catch-up). */
  readonly publish: (file: string) => Promise<void>;
  /** Told, in turn with apply, once the site's files hold every acknowledged city again. */
  readonly caughtUp: () => Promise<void>;
  /** How long a creation waits for the dataset's lock while another process holds it (ms). */
  readonly lockWait: number;
  readonly log: (line: string) => void;
}

/** How long a failed catch-up (a busy site lock, an invalid dataset) waits before it is tried again. */
const RETRY_MS = 1000;
/**
 * A catch-up starts once no batch was logged for QUIET_MS, or MAX_WAIT_MS after it was asked
 * for: a burst of POSTs is folded in by one build, and is not slowed by it (a build's writes made
 * the log's fsync 6-20 ms instead of under 1, and it takes CPU from the server).
 */
const QUIET_MS = 250;
const MAX_WAIT_MS = 3000;

/**
 * POSTs at the speed of the table. A batch of creations (those that arrive while one is written
 * go together) takes the dataset's lock, chooses ids past every id in the dataset file and its
 * log, appends them to the log (city-log.ts: fsynced), releases the lock, and has them answered
 * (`apply`): then, and only then, each is acknowledged. In the background, coalescing every
 * batch logged meanwhile, the logged cities are folded into the dataset file: the new dataset is
 * written beside it, the site built from it (`publish`), then it is renamed over the file and
 * the folded records dropped from the log. Killed at any moment, the file and the log together
 * hold every acknowledged city once: a logged city already in the file (killed between the
 * rename and the drop) is recognised by its id, which no other city can have.
 */
export class LoggedCityWriter implements CityStore {
  private readonly logFile: CityLog;
  private waiting: { city: NewCity; resolve: (c: City) => void; reject: (e: unknown) => void }[] = [];
  private writing: Promise<void> | null = null;
  private catchingUp: Promise<void> | null = null;
  private retry: NodeJS.Timeout | undefined;
  /** Batches and the end of a catch-up (rename, log drop, caughtUp) run one at a time. */
  private turn: Promise<unknown> = Promise.resolve();
  /** The dataset and log as this process last saw them, the largest id in either, and the largest in the dataset. */
  private seen = { dataset: '', log: '', lastId: 0, fileLastId: 0 };
  /** Cities this process logged that the site's files do not hold yet. */
  private logged: City[] = [];
  /** When the last batch was logged (performance.now()). */
  private lastLogged = 0;
  private closed = false;

  private constructor(
    private readonly file: string,
    private readonly target: string,
    private readonly options: LoggedWriterOptions,
  ) {
    this.logFile = CityLog.of(target);
  }

  /** The writer of `file`; cities a killed server logged are first folded into the file (so a build from it has them). */
  static async open(file: string, options: LoggedWriterOptions): Promise<LoggedCityWriter> {
    const writer = new LoggedCityWriter(file, await realpath(file), options);
    await writer.fold();
    return writer;
  }

  create(city: NewCity): Promise<City> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ city, resolve, reject });
      this.writing ??= this.drain().finally(() => (this.writing = null));
    });
  }

  /** The logged cities the site's files lack: a server process that starts answers them too. */
  unbuilt(): readonly City[] {
    return this.logged;
  }

  /** Runs `task` in turn with batches if every acknowledged city is in the site's files. */
  whenCurrent(task: () => Promise<void>): Promise<void> {
    return this.inTurn(async () => {
      if (!this.logged.length && !this.waiting.length) await task();
    });
  }

  /** Resolves once every creation queued so far is answered and the files have caught up (or failed to). */
  async idle(): Promise<void> {
    while (this.writing || this.catchingUp) await (this.writing ?? this.catchingUp);
  }

  /** Stops catching up in the background; what is still logged is folded into the dataset file. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.idle();
    await this.fold().catch((error: Error) =>
      this.options.log(`error: logged cities not folded into ${this.file} (they are next time): ${error.message}`),
    );
  }

  private inTurn<T>(task: () => Promise<T>): Promise<T> {
    const run = this.turn.then(task);
    // Settles to nothing: the turn never keeps the last batch's result alive.
    this.turn = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const batch = this.waiting;
      this.waiting = [];
      try {
        const created = await this.inTurn(() => this.logBatch(batch.map(({ city }) => city)));
        batch.forEach((p, i) =>
          i < created.length ? p.resolve(created[i]!) : p.reject(idsExhausted(this.seen.lastId)),
        );
        if (created.length) this.catchUp();
      } catch (error) {
        for (const p of batch) p.reject(this.refusal(error));
      }
    }
  }

  private async logBatch(cities: readonly NewCity[]): Promise<City[]> {
    const release = await whileBusy(() => lockDataset(this.target), this.options.lockWait);
    let created: City[];
    try {
      await this.look();
      let id = this.seen.lastId;
      // Ids past 2^53-1 are not exact in JSON clients (nor read by our reader): refused, not written.
      const room = Math.min(cities.length, Number.MAX_SAFE_INTEGER - id);
      const stamp = microTimestamps();
      created = cities.slice(0, Math.max(0, room)).map((city) => {
        const now = stamp();
        return { id: ++id, ...city, created_at: now, updated_at: now } as City;
      });
      if (!created.length) return created;
      await checkStorable(created, this.file.toLowerCase().endsWith('.json'));
      await this.logFile.append(created);
      this.lastLogged = performance.now();
      this.seen = { ...this.seen, log: await this.logFile.signature(), lastId: id };
    } finally {
      await release().catch((error: Error) =>
        this.options.log(`error: could not release the lock of ${this.target}: ${error.message}`),
      );
    }
    this.logged.push(...created);
    await this.options.apply(created);
    return created;
  }

  /** Under the dataset's lock: the largest id in the dataset and the log, read again only if another process changed either. */
  private async look(): Promise<void> {
    const [dataset, log] = [await datasetSignature(this.target), await this.logFile.signature()];
    if (dataset === this.seen.dataset && log === this.seen.log) return;
    const { ids } = await readDataset(this.file);
    const { cities, bytes } = await this.logFile.read();
    await this.logFile.cut(bytes);
    let fileLastId = 0;
    for (const id of ids) fileLastId = Math.max(fileLastId, id);
    let lastId = fileLastId;
    for (const city of cities) lastId = Math.max(lastId, city.id);
    this.seen = { dataset, log: await this.logFile.signature(), lastId, fileLastId };
  }

  /** Starts the background catch-up unless it runs (a running one loops while batches were logged meanwhile). */
  private catchUp(): void {
    if (this.closed) return;
    clearTimeout(this.retry);
    this.catchingUp ??= this.settle()
      .then(() => this.catchUpAll())
      .finally(() => (this.catchingUp = null));
  }

  /** Resolves once POSTs paused for QUIET_MS, at most MAX_WAIT_MS from now (or at once when closing). */
  private async settle(): Promise<void> {
    const latest = performance.now() + MAX_WAIT_MS;
    for (;;) {
      const left = Math.min(this.lastLogged + QUIET_MS, latest) - performance.now();
      if (left <= 0 || this.closed) return;
      await sleep(left);
    }
  }

  private async catchUpAll(): Promise<void> {
    try {
      // The file edited meanwhile (by hand, --watch): at once again, from the file as it is now.
      while (!this.closed && !(await this.catchUpOnce().catch(againIf(DatasetChanged))));
    } catch (error) {
      this.options.log(
        `error: the site is behind the data (retrying in ${RETRY_MS / 1000} s): ${(error as Error).message}`,
      );
      this.retry = setTimeout(() => this.catchUp(), RETRY_MS);
      this.retry.unref();
    }
  }

  /** Folds what the log holds now into a new dataset, builds the site from it, commits both; true once nothing more was logged meanwhile. */
  private async catchUpOnce(): Promise<boolean> {
    const { cities, bytes } = await this.logFile.read();
    const { before, fileLastId, inFile } = await this.datasetNow();
    const missing = cities.filter((city) => !inFile(city.id));
    const staged = missing.length ? await stageAppend(this.file, missing, before) : null;
    try {
      if (staged) await this.options.publish(staged.temp);
    } catch (error) {
      if (staged) await discardStaged(staged);
      throw error;
    }
    return this.inTurn(async () => {
      const release = await whileBusy(() => lockDataset(this.target), this.options.lockWait);
      try {
        if (staged) await commitStaged(staged);
        await this.logFile.dropFirst(bytes);
        // The file is `before` and the cities folded in: any id in it is known now.
        let newFileLastId = fileLastId;
        for (const city of missing) newFileLastId = Math.max(newFileLastId, city.id);
        const lastId = Math.max(this.seen.lastId, newFileLastId);
        const dataset = staged ? await datasetSignature(this.target) : this.seen.dataset;
        this.seen = { dataset, log: await this.logFile.signature(), lastId, fileLastId: newFileLastId };
      } finally {
        await release().catch(() => undefined);
      }
      const folded = new Set(cities.map((city) => city.id));
      this.logged = this.logged.filter((city) => !folded.has(city.id));
      if (this.logged.length) return false;
      await this.options.caughtUp();
      return true;
    });
  }

  /**
   * The dataset's bytes, its largest id, and which logged ids it holds. Unchanged since this
   * process last saw it (its signature, ctime included, before and after the read): a logged id is
   * in it only if past its largest id, since ids are chosen past it and only our commits add them.
   * Changed by another process: read and validated whole (seconds on the main thread, but rare).
   */
  private async datasetNow(): Promise<{ before: Buffer; fileLastId: number; inFile: (id: number) => boolean }> {
    const { dataset, fileLastId } = this.seen;
    const known = (await datasetSignature(this.target)) === dataset;
    const before = await readDatasetBytes(this.target);
    if (known && (await datasetSignature(this.target)) === dataset)
      return { before, fileLastId, inFile: (id) => id <= fileLastId };
    const ids = new Set((await readDataset(this.file)).ids);
    let last = 0;
    for (const id of ids) last = Math.max(last, id);
    return { before, fileLastId: last, inFile: (id) => ids.has(id) };
  }

  /** Under the dataset's lock: the logged cities the dataset file lacks are appended to it (no build), and the log emptied. */
  private async fold(): Promise<void> {
    const release = await whileBusy(() => lockDataset(this.target), this.options.lockWait);
    try {
      const { cities, bytes } = await this.logFile.read();
      if (!bytes) {
        await this.logFile.cut(0);
        return await this.look();
      }
      const inFile = new Set((await readDataset(this.file)).ids);
      const missing = cities.filter((city) => !inFile.has(city.id));
      if (missing.length) {
        await commitStaged(await stageAppend(this.file, missing));
        this.options.log(`${this.file}: ${missing.length} logged cities folded in`);
      }
      await this.logFile.dropFirst(Number.MAX_SAFE_INTEGER);
      this.logged = [];
      await this.look();
    } finally {
      await release().catch(() => undefined);
    }
  }

  private refusal(error: unknown): unknown {
    if (error instanceof CreateRefused) return error;
    const retryAfter = Math.max(1, Math.ceil(this.options.lockWait / 1000));
    if (error instanceof LockBusyError) {
      this.options.log(`POST refused (503): ${error.message}`);
      return new CreateRefused(
        503,
        `Another process is updating this data; nothing was written. Try again in ${retryAfter} s.`,
        retryAfter,
      );
    }
    if (error instanceof DatasetChanged) {
      this.options.log(`POST refused (503): ${error.message}`);
      return new CreateRefused(
        503,
        'The data changed while the city was being added; nothing was written. Try again.',
        1,
      );
    }
    // An invalid dataset on disk, a full disk: said in the log in one line, a plain 500 to the client.
    this.options.log(`POST failed (500): ${(error as Error).message}`);
    return new CreateRefused(500, 'A server error occurred.');
  }
}

const againIf =
  (kind: new (...args: never[]) => Error) =>
  (error: unknown): false => {
    if (error instanceof kind) return false;
    throw error;
  };

/** Synchronous: a POST reads it, and libuv's thread pool may be busy with a build's writes. */
async function datasetSignature(target: string): Promise<string> {
  const { ino, size, mtimeMs, ctimeMs } = statSync(target);
  return `${ino}:${size}:${mtimeMs}:${ctimeMs}`;
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
