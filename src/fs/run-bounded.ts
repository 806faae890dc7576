/**
 * Runs `task` over `items` with at most `limit` in flight, started in the items' order; waits for
 * all before returning, and throws the first failure (of a task or of the items) once they have
 * settled. After a failure no further item is taken, and the items' iterator is closed.
 *
 * `limit` loops share one iterator: each takes the next item when its task ends. (Racing the
 * running tasks instead adds a reaction to every one of them per item: tasks that wait long, as
 * a build's pages waiting for a writer do, gather hundreds of them, which outlive the young
 * generation and fill the heap with garbage.)
 */
export async function runBounded<T>(
  items: Iterable<T> | AsyncIterable<T>,
  task: (item: T) => Promise<void>,
  limit: number,
): Promise<void> {
  const iterator = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  let failure: { error: unknown } | undefined;
  let done = false;
  const loop = async () => {
    while (!failure && !done) {
      let next: IteratorResult<T>;
      try {
        next = await iterator.next();
      } catch (error) {
        failure ??= { error };
        return;
      }
      if (next.done) {
        done = true;
        return;
      }
      try {
        await task(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, loop));
  if (!failure) return;
  if (!done) await Promise.resolve(iterator.return?.()).catch(() => undefined);
  throw failure.error;
}
