import { realpath } from 'node:fs/promises';
import type { City } from '../core/fields.js';
import { cityJson } from '../core/json-text.js';
import type { CatchingUpStore } from '../post/city-store.js';
import type { NewCity } from '../post/create-city.js';
import { discardStaged, stageAppend } from './append-cities.js';
import { type DatasetRead, readLogged } from './as-read.js';
import { checkStorable } from './appended-text.js';
import { CatchUp } from './catch-up.js';
import { CityLog } from './city-log.js';
import { commitFold } from './fold-journal.js';
import { createRefusal } from './create-refusal.js';
import { KeptLock } from './kept-lock.js';
import { KnownIds } from './known-ids.js';
import { checkTarget, foldLog, lostLine } from './log-fold.js';
import { foldFailedAtStop } from './stop-fold.js';
import { idsExhausted, stampNew } from './new-cities.js';
import { Turns } from './turns.js';

export interface LoggedWriterOptions {
  /** Told under the dataset's lock before a batch is logged (the files are to fall behind); if it fails, the batch is refused, nothing written. */
  readonly mark: () => Promise<void>;
  /** Puts created cities in what every server process answers; a POST is acknowledged once it resolves. */
  readonly apply: (cities: readonly City[]) => Promise<void>;
  /** Rebuilds the site from a dataset file and answers from it (the catch-up); `read`: what it holds (as-read.ts), for its swap to check; `stop`: aborted by close(). */
  readonly publish: (file: string, read: DatasetRead, stop: AbortSignal) => Promise<void>;
  /** Told, in turn with apply, once the site's files hold every acknowledged city again. */
  readonly caughtUp: () => Promise<void>;
  /** How long a creation waits for the dataset's lock while another process holds it (ms). */
  readonly lockWait: number;
  readonly log: (line: string) => void;
}

/**
 * POSTs at the speed of the table. A batch of creations (those that arrive while one is written
 * go together) takes the dataset's lock, chooses ids past every id in the dataset file and its
 * log, appends them to the log (city-log.ts: fsynced), releases the lock (kept for the next
 * batch if one waits: kept-lock.ts), and has them answered (`apply`): then, and only then, each
 * is acknowledged. In the background, coalescing every batch logged meanwhile, the logged cities
 * are folded into the dataset file: the new dataset is written beside it, the site built from it
 * (`publish`), then it is renamed over the file and the folded records dropped from the log.
 * Killed at any moment, the file and the log together hold every acknowledged city once: a
 * logged city already in the file (killed between the rename and the drop) is recognised by its
 * id, which no other city can have.
 */
export class LoggedCityWriter implements CatchingUpStore {
  private readonly logFile: CityLog;
  /** The dataset and log as this process last saw them, the largest id in either, and the largest in the dataset. */
  private readonly ids: KnownIds;
  private readonly catchUp: CatchUp;
  /** The dataset's lock, kept from one batch to the next while creations wait. */
  private readonly lock: KeptLock;
  private waiting: { city: NewCity; resolve: (c: City) => void; reject: (e: unknown) => void }[] = [];
  private writing: Promise<void> | null = null;
  /** Batches and the end of a catch-up (rename, log drop, caughtUp) run one at a time. */
  private readonly turns = new Turns();
  /** Cities this process logged that the site's files do not hold yet. */
  private logged: City[] = [];
  /** Logged cities found in neither the file nor the log: never built, answered until the server stops. */
  private lost: City[] = [];

  private constructor(
    private readonly file: string,
    private readonly target: string,
    private readonly options: LoggedWriterOptions,
  ) {
    this.logFile = CityLog.of(target);
    this.ids = new KnownIds(file, target, this.logFile);
    this.catchUp = new CatchUp((stop) => this.catchUpOnce(stop), options.log);
    this.lock = new KeptLock(target, options.lockWait, options.log);
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
    return this.lost.length ? [...this.logged, ...this.lost] : this.logged;
  }

  /** Runs `task` in turn with batches if every acknowledged city is in the site's files. */
  whenCurrent(task: () => Promise<void>): Promise<void> {
    return this.turns.run(async () => {
      if (!this.logged.length && !this.waiting.length) await task();
    });
  }

  /** Resolves once every creation queued so far is answered and the files have caught up (or failed to). */
  async idle(): Promise<void> {
    while (this.writing || this.catchUp.current) await (this.writing ?? this.catchUp.current);
  }

  /** Stops catching up (a build under way stopped); its log folded into the dataset file, not the site's: it stays unbuilt (the marker too). Whether folded: see foldFailedAtStop. */
  async close(): Promise<boolean> {
    this.catchUp.stop();
    await this.idle();
    return this.fold().then(
      () => true,
      (error: unknown) => foldFailedAtStop(error, this.logFile, this.file, this.options.log),
    );
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const batch = this.waiting;
      this.waiting = [];
      let created: City[] = [];
      try {
        created = await this.turns.run(() => this.logBatch(batch.map(({ city }) => city)));
        batch.forEach((p, i) =>
          i < created.length ? p.resolve(created[i]!) : p.reject(idsExhausted(this.ids.lastId)),
        );
      } catch (error) {
        for (const p of batch) p.reject(createRefusal(error, this.options.lockWait, this.options.log));
      }
      // A batch refused whole was marked behind all the same: unmarked when nothing else is.
      if (created.length) this.catchUp.start();
      else await this.whenCurrent(() => this.options.caughtUp()).catch(() => undefined);
    }
  }

  private async logBatch(cities: readonly NewCity[]): Promise<City[]> {
    const created = await this.lock.run(
      async () => {
        await this.options.mark();
        await this.ids.look();
        const created = stampNew(cities, this.ids.lastId);
        if (!created.length) return created;
        // Each city serialized once for both (a POST's CPU: serializing is a good part of it).
        const texts = created.map((city) => cityJson(city));
        await checkStorable(created, this.file.toLowerCase().endsWith('.json'), texts);
        await this.logFile.append(created, texts);
        this.catchUp.logged();
        await this.ids.logged(created.at(-1)!.id);
        return created;
      },
      () => this.waiting.length > 0,
    );
    this.logged.push(...created);
    await this.options.apply(created);
    return created;
  }

  /** Folds what the log holds now into a new dataset, builds the site from it, commits both; true once nothing more was logged meanwhile. */
  private async catchUpOnce(stop: AbortSignal): Promise<boolean> {
    await checkTarget(this.file, this.target, this.logFile);
    // Logged before the log is read: each is in it or in the file, unless the log was deleted (or cut) meanwhile.
    const loggedBefore = this.logged.slice();
    const { cities, bytes, read } = await readLogged(this.target, this.logFile);
    const { signature, fileLastId, inFile } = await this.ids.datasetNow(cities);
    const missing = cities.filter((city) => !inFile(city.id));
    const inLog = new Set(cities.map((city) => city.id));
    const lost = loggedBefore.filter((city) => !inLog.has(city.id) && !inFile(city.id));
    // Cities this process logged that another process (a second server on the file) folded in: in the file, not in this site.
    const foldedElsewhere = this.logged.filter((city) => inFile(city.id));
    // A copy of the file with the cities written in; its commit refuses if the file changed since `signature`.
    const staged = missing.length ? await stageAppend(this.file, missing, signature) : null;
    try {
      if (staged) await this.options.publish(staged.temp, read, stop);
      else if (foldedElsewhere.length) await this.options.publish(this.file, read, stop);
      return await this.turns.run(async () => {
        await this.lock.run(async () => {
          const committed = staged && (await commitFold(staged, { cities: missing.length, log: read.log }));
          await this.logFile.dropFirst(bytes);
          await this.ids.folded(missing, fileLastId, committed);
        });
        if (lost.length) this.options.log(lostLine(lost, this.file, this.logFile.path));
        this.lost.push(...lost);
        const folded = new Set([...cities, ...foldedElsewhere, ...lost].map((city) => city.id));
        this.logged = this.logged.filter((city) => !folded.has(city.id));
        if (this.logged.length) return false;
        await this.options.caughtUp();
        return true;
      });
    } finally {
      // Committed (its name then names nothing), or not (refused, or the lock not taken): the staged file is no longer in use.
      if (staged) await discardStaged(staged);
    }
  }

  /** Under the dataset's lock: the logged cities the dataset file lacks are appended to it (no build), and the log emptied. */
  private fold(): Promise<void> {
    // One read of the file's ids serves both, the fold's, unless the file changed since (look).
    return this.lock.run(async () =>
      this.ids.look(await foldLog(this.file, this.target, this.logFile, this.options.log)),
    );
  }
}
