import { closeSync, fdatasync } from 'node:fs';
import { withPath } from './fs-error.js';

// Files made durable behind their writer's back: each open file handed over is fdatasynced on
// libuv's thread pool, overlapped with the writing of the next ones, then closed. A bounded
// number wait (each is an open file): the writer takes room before writing more, and waits for
// all of them (their first failure) before what it wrote is published.

export class FileSyncs {
  /** Files waiting for their sync, and room taken for files about to be handed over. */
  private waiting = 0;
  private failure: unknown;
  private wakes: (() => void)[] = [];

  /** `limit`: how many files may wait for their sync at once. */
  constructor(private readonly limit: number) {}

  /**
   * Takes room for `files` files, waiting while they would make more than `limit` (when none
   * waits, at once, however many): each add() uses one, release() gives back what was not used.
   */
  async room(files: number): Promise<void> {
    while (this.waiting && this.waiting + files > this.limit) await new Promise<void>((r) => this.wakes.push(r));
    this.waiting += files;
  }

  /** Gives back room taken for files that were not handed over (their writing failed). */
  release(files: number): void {
    this.waiting -= files;
    if (files) this.wake();
  }

  /**
   * Syncs the file open as `fd` (at `path`, named in a failure) in room taken for it, then closes
   * it. Never throws: a failure is thrown by `settled()`.
   */
  add(fd: number, path: string): void {
    fdatasync(fd, (synced) => {
      // Closed at once (a close is quick): not a second trip through the thread pool per file.
      let error: unknown = synced;
      try {
        closeSync(fd);
      } catch (closed) {
        error ??= closed;
      }
      if (error) this.failure ??= withPath(error, path);
      this.waiting--;
      this.wake();
    });
  }

  /** Resolves once every file handed over is synced and closed; rejects with the first failure since the last call. */
  async settled(): Promise<void> {
    while (this.waiting) await new Promise<void>((r) => this.wakes.push(r));
    const { failure } = this;
    this.failure = undefined;
    if (failure) throw failure;
  }

  private wake(): void {
    for (const wake of this.wakes.splice(0)) wake();
  }
}
