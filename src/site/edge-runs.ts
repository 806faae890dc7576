// Where a page's cities lie in a layout's blocks (edge-files.ts): the blocks holding given
// indices of the layout, cut into runs of consecutive ones in one block, the indices each block
// holds, and what a page reads from a layout (the reads themselves, a few at a time: edge-turns.ts).

/** A layout's blocks: the first index of each, the cities of the layout, and each one's path. */
export interface LayoutBlocks {
  readonly starts: readonly number[];
  readonly count: number;
  readonly path: (block: number) => string;
  /** The cities of a full block of the build (the most of any block of the default layout, where no tie is cut finer). */
  readonly full: number;
}

/**
 * The indices cut into runs in one block each: run r is indices from[r]..from[r+1]-1, in block
 * blocks[r]. Typed arrays (counted first): JS arrays of a number a run lived through the answer on
 * the JS heap, 48 KB for a page over 3,000 blocks.
 */
export function runsOf(starts: readonly number[], indices: ArrayLike<number>): Runs {
  let runs = 0;
  forEachRun(starts, indices, () => runs++);
  const [blocks, from] = [new Uint32Array(runs), new Uint32Array(runs + 1)];
  let r = 0;
  forEachRun(starts, indices, (block, i) => {
    [blocks[r], from[r]] = [block, i];
    r++;
  });
  from[runs] = indices.length;
  return { blocks, from };
}

/** `run` called with the block and first index of each run of consecutive indices in one block. */
function forEachRun(starts: readonly number[], indices: ArrayLike<number>, run: (block: number, i: number) => void) {
  let block = -1;
  for (let i = 0; i < indices.length; i++) {
    const x = indices[i]!;
    if (block >= 0 && x >= starts[block]! && (block + 1 >= starts.length || x < starts[block + 1]!)) continue;
    block = blockOf(starts, x);
    run(block, i);
  }
}

/** The indices of a block a page needs (NeededIndices.of), or any list of them. */
export type Needed = readonly number[] | Uint32Array;

/**
 * Per block of the runs, the indices within it the page needs, ascending and distinct: counted
 * in one slot per block of the layout, listed (into one array of 4 bytes a city) only once a
 * block's list is asked for, as a block read by ranges needs it. A page of every city reads its
 * blocks whole and asks for none; it made a view and a Map entry per block (~300 at 140k cities,
 * ~100 KB of JS heap) and a 560 KB array, all alive through the answer: young objects that
 * survived V8's scavenges, whose survivors grow its young generation (docs/deno.md).
 */
export class NeededIndices {
  /** The blocks the runs go through, each once, in the order they first come. */
  readonly blocks: Uint32Array;
  /** Per block of the layout: how many of the page's indices lie in it (a page's indices are distinct). */
  private readonly count: Uint32Array;
  private lists: { all: Uint32Array; at: Uint32Array; count: Uint32Array } | undefined;

  constructor(
    private readonly runs: Runs,
    private readonly starts: readonly number[],
    private readonly indices: ArrayLike<number>,
  ) {
    const count = new Uint32Array(starts.length);
    let distinct = 0;
    for (let r = 0; r < runs.blocks.length; r++) {
      const b = runs.blocks[r]!;
      if (count[b] === 0) distinct++;
      count[b]! += runs.from[r + 1]! - runs.from[r]!;
    }
    const [blocks, seen] = [new Uint32Array(distinct), new Uint8Array(starts.length)];
    let k = 0;
    for (let r = 0; r < runs.blocks.length && k < distinct; r++) {
      const b = runs.blocks[r]!;
      if (seen[b] === 0) [seen[b], blocks[k++]] = [1, b];
    }
    [this.blocks, this.count] = [blocks, count];
  }

  /** How many cities of block b the page needs. */
  size(b: number): number {
    return this.count[b] ?? 0;
  }

  /** The indices within block b the page needs, ascending and distinct (a view; every block's listed at the first call). */
  of(b: number): Uint32Array {
    const { all, at, count } = (this.lists ??= this.listed());
    return all.subarray(at[b]!, at[b]! + (count[b] ?? 0));
  }

  private listed(): { all: Uint32Array; at: Uint32Array; count: Uint32Array } {
    const { runs, starts, indices } = this;
    const at = new Uint32Array(starts.length).fill(UNPLACED);
    let offset = 0;
    for (const b of this.blocks) [at[b], offset] = [offset, offset + this.count[b]!];
    const all = new Uint32Array(offset);
    const next = at.slice();
    for (let r = 0; r < runs.blocks.length; r++) {
      const b = runs.blocks[r]!;
      for (let i = runs.from[r]!; i < runs.from[r + 1]!; i++) all[next[b]!++] = indices[i]! - starts[b]!;
    }
    const count = this.count.slice();
    for (const b of this.blocks) {
      const list = all.subarray(at[b]!, at[b]! + count[b]!).sort();
      let n = 0;
      for (let i = 0; i < list.length; i++) if (!n || list[i] !== list[n - 1]) list[n++] = list[i]!;
      count[b] = n;
    }
    return { all, at, count };
  }
}

const UNPLACED = 0xffffffff;

/** Indices cut into runs in one block each (runsOf). */
export type Runs = { readonly blocks: Uint32Array; readonly from: Uint32Array };

/**
 * The cities of the blocks a page of these indices reads from a layout, a block counted again
 * each time it is read again: what reading blocks whole costs, as blocks differ in size (a large
 * tie group's fine blocks, edge-cuts.ts). As the page reads (edge-page-reads.ts), a block a later
 * run needs is kept, up to `keep` blocks' worth of memory, the least recently used let go first
 * and read again when needed: a page of every city whose cities take turns among more blocks
 * than that reads a block per city or two. A block's share (shareOf) is guessed from its cities,
 * the index knowing no block's bytes: exact enough to choose, its error far smaller than the
 * choices' differences (14,785 blocks read against 582). At 140k cities (bench-data --tied, 13,714
 * fine blocks of 12 KB), a fine block's real share is 1.15 times the guess at the median (p10
 * 1.05, p90 1.31, min 0.92, max 2.5); every fine block is taken for one, and 40 of 3,914 coarse
 * blocks (small, before a large group) are taken for fine, counted at half. The indices' runs
 * are returned with the figures: the page read from this layout reads them (PageReads) without
 * cutting its indices again.
 */
export function readCities(
  layout: Pick<LayoutBlocks, 'starts' | 'count' | 'full'>,
  indices: ArrayLike<number>,
  keep: number,
): { blocks: number; cities: number; runs: Runs } {
  const { starts, count, full } = layout;
  const cut = runsOf(starts, indices);
  const runs = cut.blocks;
  const last = new Map<number, number>();
  runs.forEach((b, r) => last.set(b, r));
  const size = (b: number) => (starts[b + 1] ?? count) - starts[b]!;
  // Blocks kept, least recently used first, and their shares' sum.
  const kept = new Map<number, number>();
  let [held, cities] = [0, 0];
  runs.forEach((b, r) => {
    const share = kept.get(b);
    if (share === undefined) cities += size(b);
    else [held] = [held - share, kept.delete(b)];
    if (last.get(b)! <= r) return;
    kept.set(b, shareOf(size(b), full));
    held += kept.get(b)!;
    for (const [old, its] of kept) {
      if (held <= keep) break;
      [held] = [held - its, kept.delete(old)];
    }
  });
  return { blocks: last.size, cities, runs: cut };
}

/**
 * A block of `cities`' share of a full block of `full` cities, guessed from its cities: one of under
 * a quarter of a full block's is taken for a fine block (edge-cuts.ts), whose cities are compact,
 * at half a JSON city's bytes each (290 of 530 bytes at 140k cities, less where names repeat; how
 * far off that is: readCities).
 */
export function shareOf(cities: number, full: number): number {
  return Math.min(1, cities / (4 * cities < full ? 2 * full : full));
}

/** The block holding index `x`: the last whose start (the first is 0) is at most x. */
const blockOf = (starts: readonly number[], x: number) => Math.max(0, lastAtMost(starts, x));

/** The index of the last value at most x in ascending `values` (-1 if none). */
export function lastAtMost(values: ArrayLike<number>, x: number): number {
  let lo = -1;
  let hi = values.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (values[mid]! <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
