import type { Bytes } from './bytes.js';
import type { CityTable } from './city-table.js';
import type { CityStorage } from './page-assembly.js';
import { comparatorFor, DEFAULT_COLLATION, rankValues, type Collation, type Compare } from './collation.js';
import type { NameField } from './fields.js';
import { mayBeMultiField, orderingKey, type Ordering } from './ordering.js';
import { type Composer, MULTI_FIELD_CACHE, Orders, type OrderSource } from './orders.js';
import { pageOf } from './page.js';
import { lastValue, type QueryPair } from './query-string.js';
import { ROUTES } from './route-table.js';
import { idOrder, ranksOf, sortByRank, type Ranks } from './rank-order.js';

/**
 * The dataset prepared for answering: each name field ranked once, each single-field and the
 * default ordering sorted once and kept, multi-field ones composed from those (Orders). Ties go
 * to id ascending. Ranks and single-field orders come from `presorted` when given (a server reads
 * those the build wrote, site/edge-ranks.ts), else are computed here with the collation.
 */
export class CityIndex implements OrderSource {
  readonly count: number;
  private readonly rankings = new Map<NameField, Ranks>();
  private readonly singles = new Map<string, Uint32Array>();
  private readonly orders: Orders;
  private byId: Uint32Array | undefined;
  private readonly compares = new Map<NameField, Compare>();

  constructor(
    readonly table: CityTable,
    readonly collation: Collation = DEFAULT_COLLATION,
    private readonly presorted?: OrderSource,
    /** Where multi-field orders are composed (see Orders); default: here, in steps. */
    composer?: Composer,
  ) {
    this.count = table.count;
    this.orders = new Orders(this, MULTI_FIELD_CACHE, composer);
  }

  /**
   * This index with its table's cities reordered by the default ordering (CityTable.permuted), the
   * ranks made so far carried over: the same answers, and a site's dataset file written from it
   * holds them in that order, so that a server copies a default-order page as one run.
   */
  inDefaultOrder(): CityIndex {
    const order = this.single([]);
    const index = new CityIndex(this.table.permuted(order), this.collation);
    const moved = new Uint32Array(order.length);
    for (let k = 0; k < order.length; k++) moved[order[k]!] = k;
    // By id still, in the new positions: its ids are no longer in order, which a sort would cost.
    index.byId = this.byId?.map((position) => moved[position]!);
    for (const [field, { ranks, distinct }] of this.rankings)
      index.rankings.set(field, { ranks: ranks.map((_, k) => ranks[order[k]!]!), distinct });
    return index;
  }

  /**
   * Makes every field's ranks and every one-term and the default order, so that no request
   * computes them: `pause()` is awaited after each field (a server loading a site while answering
   * from another one keeps answering).
   */
  async rankAll(fields: readonly NameField[], pause: () => Promise<void>): Promise<void> {
    for (const field of fields) {
      this.ranks(field);
      this.single([{ field, descending: false }]);
      this.single([{ field, descending: true }]);
      await pause();
    }
    this.single([]);
  }

  /**
   * Null when answerListing() of these pairs is quick, else a promise that does the long part
   * beforehand in steps (a multi-field order composed, see Orders.compose), awaiting `pause()`
   * between them. answerListing() right after it settles is quick.
   */
  prepare(pairs: readonly QueryPair[], pause: () => Promise<void>): Promise<unknown> | null {
    // A single-field or default ordering is never composed: its page is not worked out twice.
    if (!mayBeMultiField(lastValue(pairs, ROUTES.param.ordering))) return null;
    const page = pageOf(this.count, pairs);
    return page && this.prepareRange(page.ordering, page.slice.start, page.slice.end, pause);
  }

  /** prepare() for positions(ordering, start, end). */
  prepareRange(ordering: Ordering, start: number, end: number, pause: () => Promise<void>): Promise<unknown> | null {
    return this.orders.composes(ordering, start, end) ? this.orders.compose(ordering, pause) : null;
  }

  /** Whether order(ordering) would compose a whole multi-field order not kept (composed() does it in steps). */
  composesWhole(ordering: Ordering): boolean {
    return this.orders.composes(ordering, 0, this.count);
  }

  /** order(ordering), composed in steps with `pause()` between them (see Orders.compose). */
  composed(ordering: Ordering, pause: () => Promise<void>): Promise<Uint32Array> {
    return this.orders.compose(ordering, pause);
  }

  /** Where the dataset's serialized cities lie: pages are copied from it (PageIndex.storage). */
  get storage(): CityStorage {
    return this.table.storage();
  }

  /** The serialized city at a position of the dataset. */
  json(position: number): Bytes {
    return this.table.cityJson(position);
  }

  /** Dataset positions in the given ordering, ties broken by id ascending. */
  order(ordering: Ordering): Uint32Array {
    return this.orders.order(ordering);
  }

  /** Drops the multi-field orders kept (Orders.forget). */
  forget(): void {
    this.orders.forget();
  }

  /** `order(ordering).subarray(start, end)`, without composing a whole multi-field order when a window does. */
  positions(ordering: Ordering, start: number, end: number): Uint32Array {
    return this.orders.positions(ordering, start, end);
  }

  /** The default ordering (`-top, name_en`) or a single-field one, sorted once. */
  single(ordering: Ordering): Uint32Array {
    if (this.presorted) return this.presorted.single(ordering);
    const key = orderingKey(ordering);
    let order = this.singles.get(key);
    if (!order) {
      const [term] = ordering;
      if (term) order = sortByRank((this.byId ??= idOrder(this.table.ids)), this.ranks(term.field), term.descending);
      else
        order = sortByRank(
          this.single([{ field: 'name_en', descending: false }]),
          { ranks: this.table.top, distinct: 2 },
          true,
        );
      this.singles.set(key, order);
    }
    return order;
  }

  distinct(field: NameField): number {
    return this.presorted ? this.presorted.distinct(field) : this.ranks(field).distinct;
  }

  /** A field's dense ranks under the collation, per dataset position. */
  ranks(field: NameField): Ranks {
    if (this.presorted) return this.presorted.ranks(field);
    let ranks = this.rankings.get(field);
    if (!ranks) {
      ranks = this.rank(field);
      this.rankings.set(field, ranks);
    }
    return ranks;
  }

  /**
   * A field's ranks and ascending order: those kept, else computed for this one use and not kept
   * (a build's edge files read each of the 16 fields once: keeping them all would hold them all).
   */
  ascending(field: NameField): { readonly ranks: Ranks; readonly order: Uint32Array } {
    if (this.presorted)
      return { ranks: this.presorted.ranks(field), order: this.presorted.single([{ field, descending: false }]) };
    const ranks = this.rankings.get(field) ?? this.rank(field);
    const order =
      this.singles.get(orderingKey([{ field, descending: false }])) ??
      sortByRank((this.byId ??= idOrder(this.table.ids)), ranks, false);
    return { ranks, order };
  }

  /** The collation's comparison of a field's values. */
  compareOf(field: NameField): Compare {
    let compare = this.compares.get(field);
    if (!compare) this.compares.set(field, (compare = comparatorFor(field, this.collation)));
    return compare;
  }

  private rank(field: NameField): Ranks {
    return ranksOf(rankValues(this.table.names(field), this.compareOf(field)));
  }
}
