import type { CityBatch } from '../core/envelope-stream.js';
import { ByteArena } from './byte-pool.js';
import { checkRun, type BlockReads } from './edge-blocks.js';
import type { BlockFile } from './edge-format.js';
import { BLOCK_SLACK, RANGE_SLACK } from './edge-ranges.js';
import { lastAtMost, NeededIndices, runsOf, type LayoutBlocks } from './edge-runs.js';
import { inTurn, Slots } from './edge-turns.js';

// The cities at given indices of a layout where they lie scattered over it: a page of another
// ordering than the layout's, as every page but the default ordering's is where a platform
// deploys that layout only (AWS Lambda's package holds the cities once). The page is read in
// windows of its cities: per window, the head of each block it touches (4 bytes a city, kept for
// later requests), then only the window's cities, by ranges (edge-ranges.ts: neighbours merged
// while the bytes read stay within 3 x theirs), each block read once per window; the window's
// cities are handed on in the page's order as one batch while the next window is read, the
// ranges of each read into the arrays of one of two arenas (byte-pool.ts), not each into a new
// one. A window holds at most WINDOW_CITIES cities and WINDOW_BYTES of their bytes, so a request
// holds two windows' reads whatever its page_size. Where ranges cannot be read (a platform
// sending whole files), whole blocks are, at most WHOLE_BLOCKS a window: right, and bounded, but
// not cheap.

/** Cities of a window, and the most bytes of theirs (their sizes known from the blocks' heads). */
const WINDOW_CITIES = 4096;
const WINDOW_BYTES = 2_000_000;
/** Blocks a window reads whole, where ranges cannot be read (each ~240 KB). */
const WHOLE_BLOCKS = 16;

/**
 * The serialized cities at `indices` of the layout, in their order, one batch per window. A
 * batch's cities are read until the batch after it is asked for.
 */
export async function* gathered(
  reads: BlockReads,
  layout: LayoutBlocks,
  indices: Uint32Array,
  concurrency: number,
  // The page's reads at once, its rank files', both windows' read meanwhile and every range of their blocks: at most `concurrency`.
  slots = new Slots(concurrency),
): AsyncGenerator<CityBatch> {
  const slack = { left: RANGE_SLACK };
  // Two windows' ranges read into two arenas in turn: a window is read while the one before is
  // sent, and its arena taken again once the consumer asks for the batch after that one.
  const arenas = [new ByteArena(), new ByteArena()];
  let windows = 0;
  const from = (at: number) => {
    const arena = arenas[windows++ % 2]!;
    arena.reset();
    const whole = indices.length <= WINDOW_CITIES;
    return readWindow(reads, layout, indices.subarray(at, at + WINDOW_CITIES), {
      concurrency,
      slots,
      slack,
      arena,
      whole,
    });
  };
  let next = indices.length ? from(0) : undefined;
  for (let at = 0; next; ) {
    const batch = await next;
    at += batch.length;
    next = at < indices.length ? from(at) : undefined;
    // A client gone before it is asked for: its failure is nobody's.
    next?.catch(() => undefined);
    yield batch;
  }
}

/** The cities of a window: the longest start of `candidate` within the window's bounds, read. */
async function readWindow(
  reads: BlockReads,
  layout: LayoutBlocks,
  candidate: Uint32Array,
  { concurrency, slots, slack, arena, whole }: Window,
): Promise<CityBatch> {
  const { starts, path } = layout;
  const citiesOf = (b: number) => (starts[b + 1] ?? layout.count) - starts[b]!;
  const range = reads.readRange;
  let runs = runsOf(starts, candidate);
  let cities = candidate.length;
  if (range) {
    const ends = new Map<number, Uint32Array>();
    await inTurn(new Set(runs.blocks), concurrency, async (b) => {
      // Unset once the platform is seen to send whole files for ranges: no more asked.
      const ranged = reads.readRange;
      if (ranged)
        ends.set(
          b,
          await reads.head(path(b), citiesOf(b), (start, end) => slots.run(() => ranged(path(b), start, end))),
        );
    });
    cities = reads.readRange ? withinBytes(runs, starts, candidate, ends) : withinBlocks(runs, WHOLE_BLOCKS);
  } else cities = withinBlocks(runs, WHOLE_BLOCKS);
  const window = candidate.subarray(0, cities);
  if (cities < candidate.length) runs = runsOf(starts, window);
  const needed = new NeededIndices(runs, starts, window);
  const files = new Map<number, BlockFile>();
  await inTurn(needed.blocks, concurrency, async (b) => {
    const [few, ranged] = [needed.of(b), reads.readRange];
    // A block kept whole, or of which the window needs a third or more, is read whole: kept for
    // later requests where the page is this one window, else into the arena (a page of every city
    // in an order close to the layout's read ~300 blocks whole: 72 MB of arrays to collect).
    if (!ranged || reads.cache.has(path(b)) || 3 * few.length >= citiesOf(b))
      return void files.set(
        b,
        await slots.run(() => (whole ? reads.block(path(b)) : reads.scanned(path(b), undefined, noop, arena.take))),
      );
    const share = Math.min(slack.left, BLOCK_SLACK);
    slack.left -= share;
    const read = (start: number, end: number) => slots.run(() => ranged(path(b), start, end, arena.take));
    files.set(b, await reads.ranged(path(b), citiesOf(b), few, share, read));
  });
  // Each run's block checked to hold its cities; city k is then read from its run's block when asked for.
  const runFiles = Array.from(runs.blocks, (b) => files.get(b)!);
  runs.blocks.forEach((b, r) =>
    checkRun(runFiles[r]!, { indices: window, from: runs.from[r]!, to: runs.from[r + 1]!, first: starts[b]! }, path(b)),
  );
  return {
    length: window.length,
    at(k) {
      const r = lastAtMost(runs.from, k);
      return runFiles[r]!.city(window[k]! - starts[runs.blocks[r]!]!);
    },
  };
}

type Runs = ReturnType<typeof runsOf>;

interface Window {
  readonly concurrency: number;
  readonly slots: Slots;
  /** What the page's ranges may read beyond 3 x their cities' bytes, left. */
  readonly slack: { left: number };
  /** Where the window's reads go, reused two windows later. */
  readonly arena: ByteArena;
  /** The page is this window: its blocks read whole are kept for later requests. */
  readonly whole: boolean;
}

const noop = () => undefined;

/** How many of the indices (at least one) hold at most WINDOW_BYTES of cities, by the blocks' city ends. */
function withinBytes(runs: Runs, starts: readonly number[], indices: Uint32Array, ends: Map<number, Uint32Array>) {
  let bytes = 0;
  for (let r = 0; r < runs.blocks.length; r++) {
    const b = runs.blocks[r]!;
    const [own, first] = [ends.get(b)!, starts[b]!];
    for (let i = runs.from[r]!; i < runs.from[r + 1]!; i++) {
      const at = indices[i]! - first;
      bytes += (own[at] ?? 0) - (at ? (own[at - 1] ?? 0) : 0);
      if (bytes > WINDOW_BYTES && i > 0) return i;
    }
  }
  return indices.length;
}

/** How many of the indices (at least one run's) lie in at most `most` distinct blocks. */
function withinBlocks(runs: Runs, most: number): number {
  const seen = new Set<number>();
  for (let r = 0; r < runs.blocks.length; r++) {
    seen.add(runs.blocks[r]!);
    if (seen.size > most) return runs.from[r]!;
  }
  return runs.from.at(-1)!;
}
