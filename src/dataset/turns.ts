/**
 * Tasks run one at a time, in the order given: each starts once the one before it has settled
 * (resolved or rejected). A writable server's batches of POSTs and the end of its catch-up take turns.
 */
export class Turns {
  private last: Promise<unknown> = Promise.resolve();

  /** `task`, run after every task given before it; its own result or error. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const run = this.last.then(task);
    // Settles to nothing: the turns never keep the last task's result alive.
    this.last = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}
