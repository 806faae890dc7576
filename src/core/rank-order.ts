// Orders composed from integer ranks without a comparator sort: each step is a stable counting
// sort (O(n + distinct ranks)), so an ordering on several fields costs a few linear passes over
// presorted data instead of an n log n sort that compares field after field.

/** A field's dense ranks (0..distinct-1) per dataset position. */
export interface Ranks {
  readonly ranks: Uint32Array | Uint8Array;
  readonly distinct: number;
}

export function ranksOf(ranks: Uint32Array): Ranks {
  let max = -1;
  for (let i = 0; i < ranks.length; i++) if (ranks[i]! > max) max = ranks[i]!;
  return { ranks, distinct: max + 1 };
}

/**
 * `order` stably re-sorted by rank (ascending, or descending): positions of equal rank keep
 * their relative order, so `order` decides every tie.
 */
export function sortByRank(order: Uint32Array, { ranks, distinct }: Ranks, descending: boolean): Uint32Array {
  const starts = new Uint32Array(distinct + 1);
  const last = distinct - 1;
  for (let i = 0; i < ranks.length; i++) starts[(descending ? last - ranks[i]! : ranks[i]!) + 1]!++;
  for (let b = 1; b <= distinct; b++) starts[b]! += starts[b - 1]!;
  const out = new Uint32Array(order.length);
  for (let i = 0; i < order.length; i++) {
    const position = order[i]!;
    out[starts[descending ? last - ranks[position]! : ranks[position]!]!++] = position;
  }
  return out;
}

/** Dataset positions by id ascending (usually already the dataset's order). */
export function idOrder(ids: Float64Array): Uint32Array {
  const order = new Uint32Array(ids.length).map((_, i) => i);
  for (let i = 1; i < ids.length; i++) if (ids[i]! < ids[i - 1]!) return order.sort((a, b) => ids[a]! - ids[b]!);
  return order;
}
