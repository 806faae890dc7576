/** `work` on each item, at most `concurrency` at once; rejects on the first failure. */
export async function inTurn<T>(
  items: Iterable<T>,
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const queue = items[Symbol.iterator]();
  const worker = async () => {
    for (let next = queue.next(); !next.done; next = queue.next()) await work(next.value);
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
}

/**
 * At most `size` reads at once, the others waiting their turn in order: one page's reads of a
 * platform's files (blocks whole, heads, ranges), wherever they start, so that the reads of the
 * blocks read at once and the ranges of each do not multiply (6 blocks of 6 ranges each: 36).
 * Only reads that start no other are run through it (a caller holding a slot and waiting for
 * another would wait for ever).
 */
export class Slots {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy++;
    try {
      return await read();
    } finally {
      // The slot handed on to the next waiting, else freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.busy--;
    }
  }
}
