import { setTimeout as sleep } from 'node:timers/promises';
import { wordingOf } from '../core/errors.js';
import { DatasetChanged } from './append-cities.js';
import { DatasetMoved } from './log-fold.js';

/**
 * How long a catch-up that failed `failures` times in a row (a busy site lock, an invalid dataset,
 * a full disk) waits before it is tried again: 1 s, doubled each time, at most a minute (a failure
 * that lasts, a full disk, logged once a minute instead of every second).
 */
export function retryDelay(failures: number): number {
  return Math.min(1000 * 2 ** Math.max(0, failures - 1), 60_000);
}
/**
 * A catch-up starts once no batch was logged for QUIET_MS, or MAX_WAIT_MS after it was asked
 * for: a burst of POSTs is folded in by one build, and is not slowed by it (a build's writes made
 * the log's fsync 6-20 ms instead of under 1, and it takes CPU from the server).
 */
const QUIET_MS = 250;
const MAX_WAIT_MS = 3000;

/**
 * When the background catch-up runs: once POSTs paused (or waited long enough), one at a time,
 * again at once while batches were logged meanwhile or the dataset file changed under it, and
 * again after retryDelay() when it failed. `once` folds in what is logged now: true once nothing more
 * was logged meanwhile.
 */
export class CatchUp {
  private running: Promise<void> | null = null;
  private retry: NodeJS.Timeout | undefined;
  /** When the last batch was logged (performance.now()). */
  private lastLogged = 0;
  private closed = false;
  /** Catch-ups that failed since the last that did not. */
  private failures = 0;
  /** Aborted by stop(): the catch-up's build under way stops (the site as it was) instead of being waited for. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly once: (stop: AbortSignal) => Promise<boolean>,
    private readonly log: (line: string) => void,
  ) {}

  /** The catch-up under way, if one is. */
  get current(): Promise<void> | null {
    return this.running;
  }

  /** A batch was logged now: a catch-up waits for a pause after it. */
  logged(): void {
    this.lastLogged = performance.now();
  }

  /** Starts the background catch-up unless it runs (a running one loops while batches were logged meanwhile). */
  start(): void {
    if (this.closed) return;
    clearTimeout(this.retry);
    this.running ??= this.settle()
      .then(() => this.all())
      .finally(() => (this.running = null));
  }

  /** No catch-up starts again; one under way stops waiting, and its build (told by `once`'s signal) stops. */
  stop(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.stopping.abort();
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

  private async all(): Promise<void> {
    try {
      // The file edited meanwhile (by hand, --watch), or the dataset or the site moved on before the
      // swap (another builder of the site: build, another writable server): at once again, from them as they are now.
      const stop = this.stopping.signal;
      while (!this.closed && !(await this.once(stop).catch(againIf(DatasetChanged, DatasetMoved))));
      this.failures = 0;
    } catch (error) {
      // Stopped (the server closing): its cities stay in the log (or the file), the site marked behind; the next start builds them.
      if (this.closed)
        return this.log(
          'stopped the catch-up build as the server stopped; the site left as it was, marked behind the data',
        );
      const delay = retryDelay(++this.failures);
      this.log(`error: the site is behind the data (retrying in ${delay / 1000} s): ${wordingOf(error)}`);
      this.retry = setTimeout(() => this.start(), delay);
      this.retry.unref();
    }
  }
}

const againIf =
  (...kinds: (new (...args: never[]) => Error)[]) =>
  (error: unknown): false => {
    if (kinds.some((kind) => error instanceof kind)) return false;
    throw error;
  };
