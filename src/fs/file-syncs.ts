import { closeSync, fdatasync } from 'node:fs';
import { withPath } from './fs-error.js';

// Files made durable behind their writer's back: each open file handed over is fdatasynced on
// libuv's thread pool, overlapped with the writing of the next ones, then closed. A bounded
// number wait (each is an open file); the writer waits for room before writing more, and for all
// of them (their first failure) before what it wrote is published.

export class FileSyncs {
  private pending = 0;
  private failure: unknown;
  private wakes: (() => void)[] = [];

  /** `limit`: how many files may wait for their sync at once. */
  constructor(private readonly limit: number) {}

  /** Syncs the file open as `fd` (at `path`, named in a failure), then closes it. Never throws: a failure is thrown by `settled()`. */
  add(fd: number, path: string): void {
    this.pending++;
    fdatasync(fd, (synced) => {
      // Closed at once (a close is quick): not a second trip through the thread pool per file.
      let error: unknown = synced;
      try {
        closeSync(fd);
      } catch (closed) {
        error ??= closed;
      }
      if (error) this.failure ??= withPath(error, path);
      this.pending--;
      for (const wake of this.wakes.splice(0)) wake();
    });
  }

  /** Resolves once fewer than `limit` files wait. */
  async room(): Promise<void> {
    while (this.pending >= this.limit) await new Promise<void>((resolve) => this.wakes.push(resolve));
  }

  /** Resolves once every file handed over is synced and closed; rejects with the first failure since the last call. */
  async settled(): Promise<void> {
    while (this.pending) await new Promise<void>((resolve) => this.wakes.push(resolve));
    const { failure } = this;
    this.failure = undefined;
    if (failure) throw failure;
  }
}
