// Where a page's cities lie in a layout's blocks (edge-files.ts): the blocks holding given
// indices of the layout, cut into runs of consecutive ones in one block.

/** A layout's blocks: the first index of each, the cities of the layout, and each one's path. */
export interface LayoutBlocks {
  readonly starts: readonly number[];
  readonly count: number;
  readonly path: (block: number) => string;
}

/** The indices cut into runs in one block each: run r is indices from[r]..from[r+1]-1, in block blocks[r]. */
export function runsOf(starts: readonly number[], indices: ArrayLike<number>): { blocks: number[]; from: number[] } {
  const blocks: number[] = [];
  const from: number[] = [];
  let block = -1;
  for (let i = 0; i < indices.length; i++) {
    const x = indices[i]!;
    if (block >= 0 && x >= starts[block]! && (block + 1 >= starts.length || x < starts[block + 1]!)) continue;
    block = blockOf(starts, x);
    blocks.push(block);
    from.push(i);
  }
  from.push(indices.length);
  return { blocks, from };
}

/** The indices of a block a page needs (edge-runs.ts neededOf), or any list of them. */
export type Needed = readonly number[] | Uint32Array;

/**
 * Per block of the runs, the indices within it the page needs, ascending and distinct: views of
 * one array of 4 bytes a city, no JS array per block (a page of every city made arrays of all its
 * indices, 1.1 MB and more of JS heap that lived through the answer and was promoted).
 */
export function neededOf(
  runs: { blocks: number[]; from: number[] },
  starts: readonly number[],
  indices: ArrayLike<number>,
): Map<number, Uint32Array> {
  // Each block's share of the array: its place (blocks in the order they first come), then filled run by run.
  const next = new Map<number, number>();
  runs.blocks.forEach((b, r) => next.set(b, (next.get(b) ?? 0) + runs.from[r + 1]! - runs.from[r]!));
  const shares: [number, number, number][] = [];
  let offset = 0;
  for (const [b, n] of next) {
    shares.push([b, offset, offset + n]);
    next.set(b, offset);
    offset += n;
  }
  const all = new Uint32Array(offset);
  runs.blocks.forEach((b, r) => {
    let at = next.get(b)!;
    for (let i = runs.from[r]!; i < runs.from[r + 1]!; i++) all[at++] = indices[i]! - starts[b]!;
    next.set(b, at);
  });
  const needed = new Map<number, Uint32Array>();
  for (const [b, start, end] of shares) {
    const list = all.subarray(start, end).sort();
    let n = 0;
    for (const x of list) if (!n || x !== list[n - 1]) list[n++] = x;
    needed.set(b, list.subarray(0, n));
  }
  return needed;
}

/**
 * The cities of the distinct blocks holding these indices of a layout: what reading them whole
 * costs, as blocks differ in size (a large tie group's fine blocks, edge-cuts.ts).
 */
export function blockCities(
  layout: Pick<LayoutBlocks, 'starts' | 'count'>,
  indices: ArrayLike<number>,
): { blocks: number; cities: number } {
  const { starts, count } = layout;
  const seen = new Set<number>();
  let cities = 0;
  for (const b of runsOf(starts, indices).blocks)
    if (!seen.has(b)) {
      seen.add(b);
      cities += (starts[b + 1] ?? count) - starts[b]!;
    }
  return { blocks: seen.size, cities };
}

/** The block holding index `x`: the last whose start (the first is 0) is at most x. */
const blockOf = (starts: readonly number[], x: number) => Math.max(0, lastAtMost(starts, x));

/** The index of the last value at most x in ascending `values` (-1 if none). */
export function lastAtMost(values: readonly number[], x: number): number {
  let lo = -1;
  let hi = values.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (values[mid]! <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

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
