import { wordingOf } from '../core/errors.js';
import { lockDataset, type Release, whileBusy } from '../fs/lock.js';

/** Longest the lock is kept from one turn to the next while creations keep coming (ms). */
const KEEP_MS = 100;

/**
 * The dataset's lock for one writer's turns, which run one at a time (LoggedCityWriter.inTurn):
 * taken by a turn unless kept from the one before, and kept after it while more creations wait
 * (`more`), for KEEP_MS at most; else released. Taking it makes, links and removes a lock file
 * (lock.ts): per batch of POSTs, 3-6 % of the main thread under a burst. Another process is no
 * worse off than when every batch released it: the next batch took it again in the same tick.
 */
export class KeptLock {
  private release: Release | null = null;
  private since = 0;

  constructor(
    private readonly target: string,
    private readonly wait: number,
    private readonly log: (line: string) => void,
  ) {}

  /** Runs `task` holding the lock; released after it unless it succeeded, `more()`, and it was kept for less than KEEP_MS. */
  async run<T>(task: () => Promise<T>, more: () => boolean = () => false): Promise<T> {
    if (!this.release) {
      this.release = await whileBusy(() => lockDataset(this.target), this.wait);
      this.since = performance.now();
    }
    let keep = false;
    try {
      const result = await task();
      keep = more() && performance.now() - this.since < KEEP_MS;
      return result;
    } finally {
      if (!keep) await this.free();
    }
  }

  private async free(): Promise<void> {
    const release = this.release;
    this.release = null;
    await release?.().catch((error: Error) =>
      this.log(`error: could not release the lock of ${this.target}: ${wordingOf(error)}`),
    );
  }
}
