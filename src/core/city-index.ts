import type { Bytes } from './bytes.js';
import type { CityTable } from './city-table.js';
import { comparatorFor, rankValues, type Collation } from './collation.js';
import type { NameField } from './fields.js';
import { orderingKey, type Ordering } from './ordering.js';
import { idOrder, ranksOf, sortByRank, type Ranks } from './rank-order.js';

const MULTI_FIELD_CACHE = 64;
/** A page whose first-term ties span at most this many cities is ordered alone, without a whole order. */
const WINDOW = 4096;

/**
 * The dataset prepared for answering: each name field ranked once, each single-field and the
 * default ordering sorted once and kept, multi-field ones composed from those by counting
 * sorts (linear passes, see rank-order.ts) and kept in a small LRU. Ties go to id ascending.
 * Orders are keyed by orderingKey(), which is injective: parseOrdering(orderingKey(o)) is o.
 */
export class CityIndex {
  readonly count: number;
  private readonly ranks = new Map<NameField, Ranks>();
  private readonly singles = new Map<string, Uint32Array>();
  private readonly multi = new Map<string, Uint32Array>();
  private byId: Uint32Array | undefined;

  constructor(readonly table: CityTable, readonly collation: Collation) {
    this.count = table.count;
  }

  /** The serialized city at a position of the dataset. */
  json(position: number): Bytes {
    return this.table.cityJson(position);
  }

  /** Dataset positions in the given ordering, ties broken by id ascending. */
  order(ordering: Ordering): Uint32Array {
    const terms = this.decisive(ordering);
    if (terms.length <= 1) return this.single(terms);
    const key = orderingKey(terms);
    let order = this.multi.get(key);
    if (order) this.multi.delete(key);
    else {
      // LSD: from the last term's presorted order, stable passes for each earlier term.
      order = this.single(terms.slice(-1));
      for (let i = terms.length - 2; i >= 0; i--) order = sortByRank(order, this.rank(terms[i]!.field), terms[i]!.descending);
      if (this.multi.size >= MULTI_FIELD_CACHE) this.multi.delete(this.multi.keys().next().value!);
    }
    this.multi.set(key, order);
    return order;
  }

  /**
   * `order(ordering).subarray(start, end)`, cheaper for a multi-field ordering not yet composed:
   * the first term's presorted order already places the page up to its ties on that term, so only
   * those ties (the cities of the first and last rank the page touches) are ordered by the rest.
   */
  positions(ordering: Ordering, start: number, end: number): Uint32Array {
    const terms = this.decisive(ordering);
    const whole = terms.length <= 1 ? this.single(terms) : this.multi.get(orderingKey(terms));
    if (whole || end <= start) return (whole ?? this.order(terms)).subarray(start, end);
    const first = this.single(terms.slice(0, 1));
    const { ranks } = this.rank(terms[0]!.field);
    let lo = start;
    let hi = end;
    while (lo > 0 && ranks[first[lo - 1]!] === ranks[first[lo]!]) lo--;
    while (hi < this.count && ranks[first[hi]!] === ranks[first[hi - 1]!]) hi++;
    if (hi - lo > WINDOW) return this.order(terms).subarray(start, end);
    const keys = terms.map((t) => ({ ranks: this.rank(t.field).ranks, sign: t.descending ? -1 : 1 }));
    const { ids } = this.table;
    const window = first.slice(lo, hi).sort((a, b) => {
      for (const key of keys) if (key.ranks[a] !== key.ranks[b]) return key.sign * (key.ranks[a]! - key.ranks[b]!);
      return ids[a]! - ids[b]!;
    });
    return window.subarray(start - lo, end - lo);
  }

  /** The terms that can decide: none after one whose ranks are all distinct. */
  private decisive(ordering: Ordering): Ordering {
    const at = ordering.findIndex((t) => this.rank(t.field).distinct === this.count);
    return at < 0 ? ordering : ordering.slice(0, at + 1);
  }

  /** The default ordering (`-top, name_en`) or a single-field one, sorted once. */
  private single(ordering: Ordering): Uint32Array {
    const key = orderingKey(ordering);
    let order = this.singles.get(key);
    if (!order) {
      const [term] = ordering;
      if (term) order = sortByRank((this.byId ??= idOrder(this.table.ids)), this.rank(term.field), term.descending);
      else order = sortByRank(this.single([{ field: 'name_en', descending: false }]), { ranks: this.table.top, distinct: 2 }, true);
      this.singles.set(key, order);
    }
    return order;
  }

  private rank(field: NameField): Ranks {
    let ranks = this.ranks.get(field);
    if (!ranks) {
      ranks = ranksOf(rankValues(this.table.names(field), comparatorFor(field, this.collation)));
      this.ranks.set(field, ranks);
    }
    return ranks;
  }
}
