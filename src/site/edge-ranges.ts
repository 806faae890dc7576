import { checkHead, HEADER_BYTES, MixedBuilds, readU32s, type BlockFile } from './edge-format.js';
import type { Into } from './byte-pool.js';
import { expandCity } from './compact-cities.js';
import { lastAtMost, type Needed } from './edge-runs.js';
import { inTurn } from './edge-turns.js';

// A block (edge-format.ts) of which a page needs only a few cities, read by byte range: its
// header and city ends (4 bytes a city), then the needed cities' bytes, neighbours read as one
// range where the bytes between them are few. What is read stays within 3 x the needed cities'
// bytes plus a slack the caller gives, so a page whose cities are spread thin over a layout reads
// about its own size instead of whole blocks.

/**
 * Bytes [start, end) of a site file (relative to the site's root), into an array `into` gives
 * where the platform can (a file read by position); rejects when it cannot, and with
 * RangeIgnored where the platform sent the whole file instead. `signal`: as ReadSiteFile's.
 */
export type ReadRange = (
  path: string,
  start: number,
  end: number,
  into?: Into,
  signal?: AbortSignal,
) => Promise<Uint8Array>;

/** A range asked for and the whole file sent (a server that ignores Range): the reader reads whole blocks from then on. */
export class RangeIgnored extends Error {
  constructor(readonly file: Uint8Array) {
    super('the range was ignored: the whole file came');
  }
}

/** Slack a request's ranged reads may spend beyond 3 x their cities' bytes, and each block's share. */
export const RANGE_SLACK = 256_000;
export const BLOCK_SLACK = 32_000;
/** What one read of a file more costs, in bytes read (a request's round trip over HTTP, a seek and a read of a file held open). */
export const READ_BYTES = 16_000;

/**
 * The bytes a block of `cities` read whole costs beyond its ranges for the cities at `needed` (its
 * head, unless `headKept`, and those cities), where that is cheaper: fewer than READ_BYTES a read
 * saved (its head and the ranges rangesFor would read, against one read) and than `slack`; else
 * undefined. Its bytes are guessed at `cityBytes` a city (edge-runs.ts shareOf; the reader sets its
 * slack right once the block is read). Ranges over a fine block (a few KB) took 2+ reads.
 */
export function wholeExtra(
  cities: number,
  needed: Needed,
  cityBytes: number,
  headKept: boolean,
  slack: number,
): number | undefined {
  const head = headKept ? 0 : headBytes(cities);
  const extra = Math.max(0, (cities - needed.length) * cityBytes - head);
  const saved = (headKept ? 0 : 1) + guessedRanges(needed, cityBytes, Math.min(slack, BLOCK_SLACK)) - 1;
  return extra <= Math.min(slack, READ_BYTES * saved) ? extra : undefined;
}

/**
 * How many ranges rangesFor reads for the cities at `needed`, each guessed at `cityBytes`: its
 * merging of the smallest gaps replayed (a page's cities 1 in 2 of a coarse block are one range,
 * not one a city).
 */
function guessedRanges(needed: Needed, cityBytes: number, slack: number): number {
  const gaps: number[] = [];
  for (let k = 1; k < needed.length; k++)
    if (needed[k] !== needed[k - 1]! + 1) gaps.push((needed[k]! - needed[k - 1]! - 1) * cityBytes);
  gaps.sort((a, b) => a - b);
  let [budget, ranges] = [2 * needed.length * cityBytes + slack, gaps.length + 1];
  for (const gap of gaps) {
    if (gap > budget) break;
    [budget, ranges] = [budget - gap, ranges - 1];
  }
  return ranges;
}

/** Byte ranges [start, end) of a file. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** A block's city ends, from its head (the first HEADER_BYTES + 4 x cities bytes), checked to be of this build. */
export function blockEnds(head: Uint8Array, cities: number, tag: Uint8Array, path: string): Uint32Array {
  checkHead(head, tag, path);
  const count = new DataView(head.buffer, head.byteOffset, head.length).getUint32(12, true);
  if (count !== cities || head.length < headBytes(cities))
    throw new MixedBuilds(
      `${path} holds ${count} cities, not ${cities}: deploy the site's files of one build together`,
    );
  return readU32s(head, HEADER_BYTES, cities);
}

/** The bytes of a block's head (header and city ends). */
export const headBytes = (cities: number) => HEADER_BYTES + 4 * cities;

/**
 * The ranges to read for the cities at `needed` (ascending, distinct) of a block whose city ends
 * are `ends`: one per city at first, then the smallest gaps merged while the bytes read stay
 * within 3 x the cities' own bytes + `slack`.
 */
export function rangesFor(ends: Uint32Array, needed: Needed, slack: number): ByteRange[] {
  const data = headBytes(ends.length);
  const at = (i: number) => data + (i ? ends[i - 1]! : 0);
  const runs: { start: number; end: number }[] = [];
  let own = 0;
  for (const i of needed) {
    const [start, end] = [at(i), data + ends[i]!];
    own += end - start;
    const last = runs.at(-1);
    if (last && last.end === start) last.end = end;
    else runs.push({ start, end });
  }
  // Gaps between consecutive runs, smallest first: merging the smallest first merges the most within a budget.
  const gaps = runs.slice(1).map((run, r) => ({ r, bytes: run.start - runs[r]!.end }));
  gaps.sort((a, b) => a.bytes - b.bytes || a.r - b.r);
  let budget = 2 * own + slack;
  const joined = new Uint8Array(runs.length);
  for (const gap of gaps) {
    if (gap.bytes > budget) break;
    budget -= gap.bytes;
    joined[gap.r + 1] = 1;
  }
  const ranges: ByteRange[] = [];
  runs.forEach((run, r) => {
    if (joined[r]) ranges[ranges.length - 1] = { start: ranges.at(-1)!.start, end: run.end };
    else ranges.push(run);
  });
  return ranges;
}

/**
 * The block's needed cities from the ranges read (`parts[k]` the bytes of `ranges[k]`): a BlockFile
 * answering for those cities only. A range of another length, or a city that is not a JSON object,
 * is a file changed since its head was read.
 */
export function partialBlock(
  ends: Uint32Array,
  ranges: readonly ByteRange[],
  parts: readonly Uint8Array[],
  path: string,
): BlockFile {
  const data = headBytes(ends.length);
  ranges.forEach((range, k) => {
    if (parts[k]!.length !== range.end - range.start)
      throw new MixedBuilds(`${path} changed while it was read: deploy the site's files of one build together`);
  });
  const starts = ranges.map((r) => r.start);
  return {
    count: ends.length,
    bytes: ends.byteLength + parts.reduce((n, part) => n + part.length, 0),
    city(i) {
      const start = data + (i ? ends[i - 1]! : 0);
      const end = data + ends[i]!;
      const k = lastAtMost(starts, start);
      const range = ranges[k];
      if (!range || end > range.end) throw new Error(`city ${i} of ${path} was not read`);
      // A city's JSON, or a compact city expanded (the ends kept of a block do not say which:
      // a compact city never starts with `{`).
      const city = expandCity(parts[k]!, start - range.start, end - range.start);
      if (!city)
        throw new MixedBuilds(`${path} changed while it was read: deploy the site's files of one build together`);
      return city;
    },
  };
}

/**
 * The block at `path` for the cities at `needed` only, given its city `ends`: the ranges
 * rangesFor plans, read `concurrency` at a time.
 */
export async function readByRanges(
  read: (start: number, end: number) => Promise<Uint8Array>,
  path: string,
  needed: Needed,
  slack: number,
  ends: Uint32Array,
  concurrency: number,
): Promise<BlockFile> {
  const ranges = rangesFor(ends, needed, slack);
  const parts: Uint8Array[] = new Array(ranges.length);
  await inTurn(ranges.keys(), concurrency, async (k) => void (parts[k] = await read(ranges[k]!.start, ranges[k]!.end)));
  const block = partialBlock(ends, ranges, parts, path);
  // Each city checked now, not as the page is sent (its cities are asked for then): a file changed is a clear failure before the answer starts.
  for (const i of needed) block.city(i);
  return block;
}
