import type { CityTable } from './city-table.js';
import { comparatorFor, rankValues, type Collation } from './collation.js';
import type { NameField } from './fields.js';
import { orderingKey, type Ordering } from './ordering.js';

const MULTI_FIELD_CACHE = 64;

/**
 * The dataset prepared for answering: each name field ranked once, each ordering sorted once
 * (single-field and default orderings kept, multi-field ones in a small LRU), so a page is a
 * slice of a presorted index, never a sort per request.
 */
export class CityIndex {
  readonly count: number;
  private readonly ranks = new Map<NameField, Uint32Array>();
  private readonly orders = new Map<string, Uint32Array>();
  private readonly multiOrders = new Map<string, Uint32Array>();

  constructor(readonly table: CityTable, readonly collation: Collation) {
    this.count = table.count;
  }

  /** The serialized city at a position of the dataset. */
  json(position: number): Buffer {
    return this.table.cityJson(position);
  }

  /** Dataset positions in the given ordering, ties broken by id ascending. */
  order(ordering: Ordering): Uint32Array {
    const key = orderingKey(ordering);
    const cached = this.orders.get(key) ?? this.multiOrders.get(key);
    if (cached) {
      if (this.multiOrders.delete(key)) this.multiOrders.set(key, cached);
      return cached;
    }
    const sorted = this.sort(ordering);
    if (ordering.length <= 1) this.orders.set(key, sorted);
    else {
      this.multiOrders.set(key, sorted);
      if (this.multiOrders.size > MULTI_FIELD_CACHE) this.multiOrders.delete(this.multiOrders.keys().next().value!);
    }
    return sorted;
  }

  private rank(field: NameField): Uint32Array {
    let ranks = this.ranks.get(field);
    if (!ranks) {
      ranks = rankValues(this.table.names(field), comparatorFor(field, this.collation));
      this.ranks.set(field, ranks);
    }
    return ranks;
  }

  private sort(ordering: Ordering): Uint32Array {
    const { ids, top } = this.table;
    const positions = new Uint32Array(this.count).map((_, i) => i);
    if (ordering.length === 0) {
      const name = this.rank('name_en');
      return positions.sort((a, b) => top[b]! - top[a]! || name[a]! - name[b]! || ids[a]! - ids[b]!);
    }
    const keys = ordering.map((t) => ({ ranks: this.rank(t.field), sign: t.descending ? -1 : 1 }));
    return positions.sort((a, b) => {
      for (const { ranks, sign } of keys) {
        const d = ranks[a]! - ranks[b]!;
        if (d !== 0) return sign * d;
      }
      return ids[a]! - ids[b]!;
    });
  }
}
