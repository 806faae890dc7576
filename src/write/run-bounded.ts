/**
 * Runs `task` over `items` with at most `limit` in flight; waits for all before returning, and
 * throws the first failure once they have settled.
 */
export async function runBounded<T>(items: Iterable<T> | AsyncIterable<T>, task: (item: T) => Promise<void>, limit: number): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: unknown;
  try {
    for await (const item of items) {
      if (failure) break;
      const p: Promise<void> = task(item).catch((error) => void (failure ??= error)).finally(() => running.delete(p));
      running.add(p);
      if (running.size >= limit) await Promise.race(running);
    }
  } finally {
    await Promise.all(running);
  }
  if (failure) throw failure;
}
