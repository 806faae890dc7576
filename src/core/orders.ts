import type { NameField } from './fields.js';
import { orderingKey, type Ordering } from './ordering.js';
import { sortByRank, type Ranks } from './rank-order.js';

/** Orders composed and kept besides the single-field ones (each is 4 bytes a city). */
export const MULTI_FIELD_CACHE = 64;
/** A page whose first-term ties span at most this many cities is ordered alone, without a whole order. */
const WINDOW = 4096;

/**
 * What orderings are composed from: each field's dense ranks and its single-field orders (and the
 * default one), ties by id ascending. The server ranks fields itself (CityIndex); the edge reads
 * ranks the build wrote (site/edge-source.ts).
 */
export interface OrderSource {
  readonly count: number;
  /** Distinct values of a field under the collation: a field with `count` of them decides every tie. */
  distinct(field: NameField): number;
  ranks(field: NameField): Ranks;
  /** Positions in the default ordering (no term) or a one-term one, ties by id ascending. */
  single(ordering: Ordering): Uint32Array;
}

/**
 * Multi-field orderings from a source's single-field ones: composed by counting sorts (linear
 * passes, see rank-order.ts) and kept in a small LRU, or for one page only its window.
 * Orders are keyed by orderingKey(), which is injective: parseOrdering(orderingKey(o)) is o.
 */
export class Orders {
  private readonly multi = new Map<string, Uint32Array>();

  constructor(
    private readonly source: OrderSource,
    private readonly cacheSize = MULTI_FIELD_CACHE,
  ) {}

  /** Dataset positions in the given ordering, ties broken by id ascending. */
  order(ordering: Ordering): Uint32Array {
    const terms = this.decisive(ordering);
    if (terms.length <= 1) return this.source.single(terms);
    const key = orderingKey(terms);
    let order = this.multi.get(key);
    if (order) this.multi.delete(key);
    else {
      // LSD: from the last term's presorted order, stable passes for each earlier term.
      order = this.source.single(terms.slice(-1));
      for (let i = terms.length - 2; i >= 0; i--)
        order = sortByRank(order, this.source.ranks(terms[i]!.field), terms[i]!.descending);
      if (this.multi.size >= this.cacheSize) this.multi.delete(this.multi.keys().next().value!);
    }
    if (this.cacheSize > 0) this.multi.set(key, order);
    return order;
  }

  /**
   * `order(ordering).subarray(start, end)`, cheaper for a multi-field ordering not yet composed:
   * the first term's presorted order already places the page up to its ties on that term, so only
   * those ties (the cities of the first and last rank the page touches) are ordered by the rest.
   */
  positions(ordering: Ordering, start: number, end: number): Uint32Array {
    const terms = this.decisive(ordering);
    const whole = terms.length <= 1 ? this.source.single(terms) : this.multi.get(orderingKey(terms));
    if (whole || end <= start) return (whole ?? this.order(terms)).subarray(start, end);
    const first = this.source.single(terms.slice(0, 1));
    const { ranks } = this.source.ranks(terms[0]!.field);
    let lo = start;
    let hi = end;
    while (lo > 0 && ranks[first[lo - 1]!] === ranks[first[lo]!]) lo--;
    while (hi < this.source.count && ranks[first[hi]!] === ranks[first[hi - 1]!]) hi++;
    if (hi - lo > WINDOW) return this.order(terms).subarray(start, end);
    const keys = terms.map((t) => ({ ranks: this.source.ranks(t.field).ranks, sign: t.descending ? -1 : 1 }));
    const window = first.subarray(lo, hi);
    // Ties on every term keep their places in `first`, which are by id ascending.
    const at = Uint32Array.from({ length: hi - lo }, (_, i) => i).sort((a, b) => {
      const p = window[a]!,
        q = window[b]!;
      for (const key of keys) if (key.ranks[p] !== key.ranks[q]) return key.sign * (key.ranks[p]! - key.ranks[q]!);
      return a - b;
    });
    return at.subarray(start - lo, end - lo).map((i) => window[i]!);
  }

  /** The terms that can decide: none after one whose ranks are all distinct. */
  decisive(ordering: Ordering): Ordering {
    const at = ordering.findIndex((t) => this.source.distinct(t.field) === this.source.count);
    return at < 0 ? ordering : ordering.slice(0, at + 1);
  }
}
