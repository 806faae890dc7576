import { CitiesApiError, wordingOf } from '../core/errors.js';
import type { City } from '../core/fields.js';
import { type CatchingUpStore, CreateRefused } from '../post/city-store.js';
import type { NewCity } from '../post/create-city.js';
import { ANSWERING_FLAGS } from '../proc/answering-flags.js';
import { startProcess, type WorkerChannel, WorkerEnded } from '../proc/workers.js';
import type { SiteSettings } from '../site/spec.js';
import { noSiteIn, readManifestHead } from '../store/manifest-file.js';
import type { FrontOptions } from './front.js';
import type { Opened, SiteServers } from './site-server.js';

/** How long a worker may take to close, beyond the answers it lets finish (closeGrace), before it is killed. */
const CLOSE_MS = 5000;

/** What a worker needs to listen: the options of its HTTP front, as plain data (functions cannot cross). */
export interface WorkerSetup extends Omit<FrontOptions, 'requestLog' | 'log'> {
  /** Send a line per request to the primary. */
  readonly requestLog: boolean;
  readonly writable: boolean;
}

/** The pool (the one writer) and each worker (a SiteServer in its own process). */
export interface ServerProtocol {
  readonly parent: {
    /** A POST's valid city, created by the one writer (refused: a CreateRefused). */
    readonly calls: { create(city: NewCity): City };
    readonly events: { close: null };
  };
  readonly worker: {
    readonly calls: {
      /** Listen; answers where. */
      setup(setup: WorkerSetup): string;
      open(baseUrl: string | undefined): Opened;
      /** Stop using the site's files (a build is about to replace them); answered once none is being sent. */
      replace(): void;
      /** The build is over (or failed): load the site as it is now; answered once it is answered. */
      replaced(): void;
      /** Answer with these created cities too; answered once they are answered (before open: from the first request). */
      add(cities: readonly City[]): void;
    };
    readonly events: { log: string; request: string };
  };
}
type ServerWorker = WorkerChannel<ServerProtocol>;

/**
 * `serve --workers N`: N worker processes (node:cluster) sharing the port, each answering every
 * request from the whole site. A rebuild (--watch, a POST) first has every worker stop using the
 * site's files, then builds, then has every worker load the new site, and only then is reported
 * (a POST answered 201): what one worker answers after that, every worker answers. A worker that
 * dies is replaced.
 */
export class ServerPool implements SiteServers {
  private readonly workers = new Set<ServerWorker>();
  /** Those answering from the site: what a build waits for (one starting opens the site as it is then). */
  private readonly ready = new Set<ServerWorker>();
  /** Those listening, ready or still opening the site: what a POST waits for. */
  private readonly listening = new Set<ServerWorker>();
  private store: CatchingUpStore | undefined;
  private current: SiteSettings | undefined;
  private opened = false;
  private closing = false;
  url = '';

  private constructor(
    private readonly setup: WorkerSetup,
    private readonly count: number,
    private readonly log: (line: string) => void,
    private readonly requestLog: ((line: string) => void) | undefined,
  ) {}

  /** Starts `count` workers, listening. */
  static async start(options: FrontOptions & { readonly writable: boolean }, count: number): Promise<ServerPool> {
    const { log, requestLog, ...setup } = options;
    const pool = new ServerPool({ ...setup, requestLog: !!requestLog }, count, log, requestLog);
    try {
      pool.url = (await Promise.all(Array.from({ length: count }, () => pool.startWorker())))[0]!;
      return pool;
    } catch (error) {
      await pool.close();
      throw error;
    }
  }

  get settings(): SiteSettings {
    return this.current!;
  }

  async open(baseUrl: string | undefined, store: CatchingUpStore | undefined): Promise<Opened> {
    this.store = store;
    this.current = await settingsOf(this.setup.dir);
    const answers = await Promise.all([...this.workers].map((worker) => answered(worker.call('open', baseUrl))));
    const first = answers.find((answer) => answer);
    if (!first || answers.length < this.count) throw new CitiesApiError('server workers exited while opening the site');
    for (const worker of this.workers) this.ready.add(worker);
    this.opened = true;
    return first;
  }

  async replace(build: () => Promise<void>): Promise<void> {
    await Promise.all([...this.ready].map((worker) => answered(worker.call('replace', undefined))));
    try {
      await build();
    } finally {
      await Promise.all([...this.ready].map((worker) => answered(worker.call('replaced', undefined))));
      this.current = await settingsOf(this.setup.dir);
    }
  }

  async addCities(cities: readonly City[]): Promise<void> {
    await Promise.all([...this.listening].map((worker) => answered(worker.call('add', cities))));
  }

  describe(): string {
    return `answered by ${this.workers.size} workers`;
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      [...this.workers].map(async (worker) => {
        const kill = setTimeout(() => void worker.stop('SIGKILL'), this.setup.limits.closeGrace + CLOSE_MS);
        worker.emit('close', null);
        await worker.ended;
        clearTimeout(kill);
      }),
    );
  }

  /** A new worker, listening; once the site is open, it opens it too. Answers where it listens. */
  private async startWorker(): Promise<string> {
    const worker: ServerWorker = startProcess('app/serve-worker', {
      name: 'a server worker',
      errors: [CreateRefused],
      execArgv: ANSWERING_FLAGS,
    });
    this.workers.add(worker);
    worker.on('log', this.log);
    worker.on('request', (line) => this.requestLog?.(line));
    worker.handle('create', (city) => this.store!.create(city));
    void worker.ended.then(({ code, signal }) => {
      this.workers.delete(worker);
      this.ready.delete(worker);
      this.listening.delete(worker);
      if (this.closing || !this.opened) return;
      this.log(`worker ${worker.worker.pid} exited (${signal ?? code}): starting another`);
      this.startWorker().catch((error) => this.log(`error: a worker could not start: ${wordingOf(error)}`));
    });
    const url = await answered(worker.call('setup', this.setup));
    // Past each wait, one that ended meanwhile is not added back to what its end removed it from.
    if (url === undefined || !this.workers.has(worker))
      throw new CitiesApiError(`a server worker (pid ${worker.worker.pid}) exited while starting`);
    this.listening.add(worker);
    if (this.opened) {
      // Each acknowledged city is in the files it opens (they only gain cities), in these, or sent as it is created.
      const unbuilt = this.store?.unbuilt() ?? [];
      if (unbuilt.length) await answered(worker.call('add', unbuilt));
      await answered(worker.call('open', undefined));
      if (this.workers.has(worker)) this.ready.add(worker);
    }
    return url;
  }
}

/** A worker's answer, or undefined if it ended first; any error it answered with is a CitiesApiError. */
function answered<T>(call: Promise<T>): Promise<T | undefined> {
  return call.catch((error: Error) => {
    if (error instanceof WorkerEnded) return undefined;
    throw error instanceof CitiesApiError ? error : new CitiesApiError(error.message);
  });
}

async function settingsOf(dir: string): Promise<SiteSettings> {
  const head = await readManifestHead(dir);
  if (!head) throw noSiteIn(dir, 2);
  return head.settings;
}
