// Edge reads bounded in time by cohort: the reads started within one window share one
// AbortController and one timer, and those still under way are given up together
// READ_TIMEOUT_MS to READ_TIMEOUT_MS + DEADLINE_WINDOW_MS after they started. A controller, a
// timer and a race for each read lifted the peak memory of pages of every city (~500 reads each
// at 140k cities) on Lambda and Deno; per read there is only the record of how to reject it.

/** How long one edge file may take to arrive before the request fails (a clear 500, never a hang). */
export const READ_TIMEOUT_MS = 10_000;

/** Reads started within this time of each other share their deadline. */
export const DEADLINE_WINDOW_MS = 1_000;

/**
 * A read bounded in time: `start` given the signal aborted when it is given up; then `givenUp`
 * is called, the read rejected with "no answer in 10 s", and what it still gives handed to `late`.
 */
export type BoundedRead = <T>(
  start: (signal: AbortSignal) => Promise<T>,
  late?: (value: T) => void,
  givenUp?: () => void,
) => Promise<T>;

interface Cohort {
  readonly started: number;
  readonly aborted: AbortController;
  readonly pending: Set<(error: Error) => void>;
}

/** Reads bounded by cohort (one per edge site: its timers then stop with it). */
export function readDeadlines(now: () => number = Date.now): BoundedRead {
  let open: Cohort | undefined;
  const join = (): Cohort => {
    if (open && now() - open.started < DEADLINE_WINDOW_MS) return open;
    const cohort: Cohort = { started: now(), aborted: new AbortController(), pending: new Set() };
    const timer = setTimeout(() => {
      if (open === cohort) open = undefined;
      if (cohort.pending.size === 0) return;
      const error = new Error(`no answer in ${READ_TIMEOUT_MS / 1000} s`);
      cohort.aborted.abort(error);
      for (const giveUp of cohort.pending) giveUp(error);
      cohort.pending.clear();
    }, READ_TIMEOUT_MS + DEADLINE_WINDOW_MS);
    // Reads under way keep a process alive by themselves; an idle deadline does not.
    (timer as { unref?: () => void }).unref?.();
    open = cohort;
    return cohort;
  };
  return <T>(start: (signal: AbortSignal) => Promise<T>, late?: (value: T) => void, givenUp?: () => void) => {
    const { aborted, pending } = join();
    return new Promise<T>((resolve, reject) => {
      const giveUp = (error: Error) => {
        givenUp?.();
        reject(error);
      };
      pending.add(giveUp);
      Promise.resolve()
        .then(() => start(aborted.signal))
        .then(
          (value) => (pending.delete(giveUp) ? resolve(value) : late?.(value)),
          (error: unknown) => pending.delete(giveUp) && reject(error),
        );
    });
  };
}
