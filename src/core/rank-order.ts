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
export function sortByRank(order: Uint32Array, ranks: Ranks, descending: boolean): Uint32Array {
  return finish(sortByRankSteps(order, ranks, descending, Infinity));
}

/**
 * sortByRank() in steps: the generator pauses after each `step` cities of either pass, so a
 * caller can let other work run between steps (see Orders.compose); its return value is the order.
 */
export function* sortByRankSteps(
  order: Uint32Array,
  { ranks, distinct }: Ranks,
  descending: boolean,
  step: number,
): Generator<void, Uint32Array> {
  const starts = new Uint32Array(distinct + 1);
  const last = distinct - 1;
  for (let from = 0; from < ranks.length; from += step) {
    const to = Math.min(ranks.length, from + step);
    for (let i = from; i < to; i++) starts[(descending ? last - ranks[i]! : ranks[i]!) + 1]!++;
    yield;
  }
  for (let b = 1; b <= distinct; b++) starts[b]! += starts[b - 1]!;
  const out = new Uint32Array(order.length);
  for (let from = 0; from < order.length; from += step) {
    const to = Math.min(order.length, from + step);
    for (let i = from; i < to; i++) {
      const position = order[i]!;
      out[starts[descending ? last - ranks[position]! : ranks[position]!]!++] = position;
    }
    if (to < order.length) yield;
  }
  return out;
}

/** Runs a generator of steps to its end at once: its return value. */
export function finish<T>(steps: Generator<void, T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Dataset positions by id ascending (usually already the dataset's order). */
export function idOrder(ids: Float64Array): Uint32Array {
  const order = new Uint32Array(ids.length).map((_, i) => i);
  for (let i = 1; i < ids.length; i++) if (ids[i]! < ids[i - 1]!) return order.sort((a, b) => ids[a]! - ids[b]!);
  return order;
}
