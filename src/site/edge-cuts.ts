import type { CityIndex } from '../core/city-index.js';
import { NAME_FIELDS } from '../core/fields.js';
import { ROUTES } from '../core/route-table.js';

// Where the blocks of the edge data's layouts (edge-files.ts) start. A layout is cut into blocks
// of at most BLOCK_BYTES of cities, so that a page of its order is one or two blocks. Where a
// host reads files only whole (Cloudflare's assets binding ignores Range), a page of a
// multi-field ordering whose first field has a large tie group (many cities of one value, ordered
// by id in that layout) finds its cities scattered over the group's blocks, and reads each whole:
// there, a build for that host cuts every group over LARGE_GROUP_BYTES into fine blocks of its
// own, as small as the host's file budget allows (site/asset-budget.ts), their cities written
// compact (compact-cities.ts: the values without the keys, so a file of the budget holds about
// twice the cities), so that such a page reads a small block for each few of its cities, not 240 KB. Smaller groups stay in the coarse
// blocks: a page ending inside one reads at most that group's bytes beyond its own.

/** City bytes per block: two blocks (a page across a boundary) stay under 512 KB with their headers. */
export const BLOCK_BYTES = 240_000;
/** A tie group of more than this many bytes of cities is cut into fine blocks, where a build asks for them. */
export const LARGE_GROUP_BYTES = 60_000;

/** One layout's order and its tie groups, as edge-files.ts writes it. */
export interface OrderedLayout {
  /** The default ordering's (`ROUTES.absent`) or a name field's ascending one. */
  readonly layout: (typeof NAME_FIELDS)[number] | typeof ROUTES.absent;
  readonly order: Uint32Array;
  /** Whether order[i] starts a group of equal values (i = 0 does). */
  readonly startsGroup: (i: number) => boolean;
  /** The field's distinct values (a field's layout only). */
  readonly distinct?: number;
}

/**
 * Each field's ascending order, then the default ordering's, with their groups of equal values:
 * one at a time, each computed when asked for (a build holds one field's ranks at once).
 */
export function* orderedLayouts(index: CityIndex): Generator<OrderedLayout> {
  for (const field of NAME_FIELDS) {
    const { order, ranks } = index.ascending(field);
    const r = ranks.ranks;
    yield {
      layout: field,
      order,
      startsGroup: (i) => i === 0 || r[order[i]!] !== r[order[i - 1]!],
      distinct: ranks.distinct,
    };
  }
  const order = index.single([]);
  const { ranks } = index.ranks('name_en');
  const { top } = index.table;
  const differs = (a: number, b: number) => top[a] !== top[b] || ranks[a] !== ranks[b];
  yield { layout: ROUTES.absent, order, startsGroup: (i) => i === 0 || differs(order[i]!, order[i - 1]!) };
}

/** How fine blocks are measured: each city's bytes as written there (compact: compact-cities.ts), and the fine blocks' numbers, pushed as cut. */
export interface FineCut {
  readonly bytes: (i: number) => number;
  readonly blocks?: number[];
}

/**
 * The first index of each block of a layout whose i-th city takes `bytes(i)`: coarse blocks of at
 * most BLOCK_BYTES (at least one city each); with `fine`, every group over LARGE_GROUP_BYTES in
 * blocks of its own of at most `fine` bytes (the coarse block before it ends there), of cities
 * measured by `cut.bytes` where given.
 */
export function blockStarts(
  count: number,
  bytes: (i: number) => number,
  startsGroup: (i: number) => boolean,
  fine?: number,
  cut?: FineCut,
): number[] {
  const starts: number[] = [];
  // Bytes of the block being filled; Infinity: none is (the next city starts one).
  let filled = Number.POSITIVE_INFINITY;
  const add = (i: number, most: number, size: number) => {
    if (filled + size > most) {
      if (most === fine) cut?.blocks?.push(starts.length);
      starts.push(i);
      filled = 0;
    }
    filled += size;
  };
  if (!fine) {
    for (let i = 0; i < count; i++) add(i, BLOCK_BYTES, bytes(i));
    return starts;
  }
  for (let start = 0; start < count; ) {
    let end = start + 1;
    let group = bytes(start);
    for (; end < count && !startsGroup(end); end++) group += bytes(end);
    const most: number = group > LARGE_GROUP_BYTES ? fine : BLOCK_BYTES;
    // A large group starts a block of its own and ends its last one.
    if (most === fine) filled = Number.POSITIVE_INFINITY;
    const size = most === fine ? (cut?.bytes ?? bytes) : bytes;
    for (let i = start; i < end; i++) add(i, most, size(i));
    if (most === fine) filled = Number.POSITIVE_INFINITY;
    start = end;
  }
  return starts;
}

/** The layouts of the edge data of `index` the build writes apart (a field of another's order shares its layout). */
export function distinctLayouts(index: CityIndex): OrderedLayout[] {
  const kept: OrderedLayout[] = [];
  for (const layout of orderedLayouts(index))
    if (!kept.some((k) => sameOrder(k.order, layout.order))) kept.push(layout);
  return kept;
}

/** Whether a layout has a tie group over LARGE_GROUP_BYTES (which fine blocks would cut). */
export function hasLargeGroup({ order, startsGroup }: OrderedLayout, lengths: Uint32Array): boolean {
  let group = 0;
  for (let i = 0; i < order.length; i++) {
    group = startsGroup(i) ? lengths[order[i]!]! : group + lengths[order[i]!]!;
    if (group > LARGE_GROUP_BYTES) return true;
  }
  return false;
}

/**
 * Block files of these layouts of cities whose JSON takes `lengths` bytes, large groups in blocks
 * of at most `fine` bytes of the cities as `fineLengths` says they take there (default `lengths`).
 */
export function blockFileCount(
  layouts: readonly OrderedLayout[],
  lengths: Uint32Array,
  fine?: number,
  fineLengths = lengths,
): number {
  let files = 0;
  for (const { order, startsGroup } of layouts) {
    const bytes = (i: number) => fineLengths[order[i]!]!;
    files += blockStarts(order.length, (i) => lengths[order[i]!]!, startsGroup, fine, { bytes }).length;
  }
  return files;
}

export function sameOrder(a: Uint32Array, b: Uint32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
