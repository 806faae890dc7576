import type { Bytes } from './bytes.js';
import type { CityIndex } from './city-index.js';
import { CityTable } from './city-table.js';
import type { Compare } from './collation.js';
import type { City, NameField } from './fields.js';
import { orderingKey, type Ordering } from './ordering.js';
import { pageOf, type PageIndex } from './page.js';
import type { QueryPair } from './query-string.js';
import { extendPlacement, lowerBound, placedBefore, type Placement, type Term } from './overlay-placement.js';

/** Orderings whose placement of the added cities is kept (8 bytes per added city each). */
const KEPT = 64;

/**
 * A CityIndex (the base: a loaded site's dataset) with cities added by POSTs beside it, answering
 * as an index rebuilt from both would, at a cost that does not grow with the base: the base is
 * never ranked, sorted or copied again. Each added city gets, per field, a key among the base's
 * ranks (2r + 1: equal to rank r; 2r: between ranks r - 1 and r), found by binary search in the
 * field's order; per ordering the added cities are sorted and each placed in the base's order by
 * binary search (computed on first use, extended for later additions); a page merges the base's
 * positions with the added ones that fall in it. The base replaces the overlay when a build that
 * holds the added cities is loaded (LiveSite.reload).
 */
export class OverlayIndex implements PageIndex {
  readonly count: number;
  private readonly placements: Map<string, Placement>;
  /** Set once an overlay extends this one: it may have appended keys of its own cities to `keys`. */
  private extended = false;

  private constructor(
    readonly base: CityIndex,
    /** The added cities; position base.count + i is added city i. */
    readonly added: CityTable,
    /** Per field, each added city's key (append-only: shared with the overlays extending this one). */
    private readonly keys: Map<NameField, number[]>,
    placements: ReadonlyMap<string, Placement>,
  ) {
    this.count = base.count + added.count;
    this.placements = new Map(placements);
  }

  /** `base` answering with `cities` too. */
  static over(base: CityIndex, cities: readonly City[]): OverlayIndex {
    return new OverlayIndex(base, CityTable.fromCities(cities, true), new Map(), new Map());
  }

  /** This overlay with `cities` added after its own: placements kept are extended on their next use. */
  with(cities: readonly City[]): OverlayIndex {
    // Keys are shared with the first extension only: a second one from here gets its own copy.
    const n = this.added.count;
    const keys = this.extended ? new Map([...this.keys].map(([f, k]) => [f, k.slice(0, n)])) : this.keys;
    this.extended = true;
    return new OverlayIndex(this.base, this.added.appended(cities), keys, this.placements);
  }

  json(position: number): Bytes {
    const n = this.base.count;
    return position < n ? this.base.json(position) : this.added.cityJson(position - n);
  }

  positions(ordering: Ordering, start: number, end: number): Uint32Array {
    const { sorted, before } = this.placement(ordering);
    const { first, last, from, to } = this.split(before, start, end);
    const base = this.base.positions(ordering, from, to);
    const out = new Uint32Array(Math.max(0, end - start));
    for (let p = start, j = first, b = 0; p < end; p++)
      out[p - start] = j < last && before[j]! + j === p ? this.base.count + sorted[j++]! : base[b++]!;
    return out;
  }

  /** Drops what answering kept: the placements, the added cities' keys, the base's multi-field orders (a warm-up's, app/front.ts). */
  forget(): void {
    this.placements.clear();
    // Shared with an extension at most, which computes them again on its next use as this one does.
    this.keys.clear();
    this.base.forget();
  }

  /** Null when answering these pairs is quick; else composes (in steps) the base order it needs first. */
  prepare(pairs: readonly QueryPair[], pause: () => Promise<void>): Promise<unknown> | null {
    const page = pageOf(this.count, pairs);
    if (!page) return null;
    const { ordering } = page;
    // Placing added cities binary-searches the base's whole order (a multi-field one is composed).
    const placed = this.placements.get(orderingKey(ordering))?.covered === this.added.count;
    if (!placed && this.base.composesWhole(ordering)) return this.base.composed(ordering, pause);
    const { from, to } = this.split(this.placement(ordering).before, page.slice.start, page.slice.end);
    return this.base.prepareRange(ordering, from, to, pause);
  }

  /** The added cities placed in [start, end) (first..last in sorted) and the base's range [from, to) the page holds. */
  private split(before: Uint32Array, start: number, end: number) {
    const first = placedBefore(before, start);
    const last = placedBefore(before, end);
    const from = start - first;
    return { first, last, from, to: Math.max(from, end - last) };
  }

  private placement(ordering: Ordering): Placement {
    const key = orderingKey(ordering);
    const kept = this.placements.get(key);
    this.placements.delete(key);
    const placement = kept?.covered === this.added.count ? kept : this.extend(ordering, kept);
    if (this.placements.size >= KEPT) this.placements.delete(this.placements.keys().next().value!);
    this.placements.set(key, placement);
    return placement;
  }

  /** `kept` (or nothing) extended to every added city (overlay-placement.ts). */
  private extend(ordering: Ordering, kept: Placement | undefined): Placement {
    const terms = this.terms(ordering);
    return extendPlacement(
      terms,
      kept,
      this.added,
      this.base.table.ids,
      () => this.base.order(ordering),
      (field, a, b) => this.compareValues(field, a, b),
    );
  }

  /** The ordering's terms (the default one is `-top, name_en`), each as keys of base and added cities. */
  private terms(ordering: Ordering): Term[] {
    const { top } = this.base.table;
    const fieldTerms = ordering.length ? ordering : [{ field: 'name_en' as const, descending: false }];
    const terms: Term[] = fieldTerms.map(({ field, descending }) => {
      const ranks = this.base.ranks(field).ranks;
      const keys = this.fieldKeys(field);
      return { sign: descending ? -1 : 1, base: (p) => 2 * ranks[p]! + 1, added: (i) => keys[i]!, field };
    });
    if (!ordering.length) terms.unshift({ sign: -1, base: (p) => top[p]!, added: (i) => this.added.top[i]! });
    return terms;
  }

  /** Every added city's key for `field`, those missing computed now (log2(base) comparisons each). */
  private fieldKeys(field: NameField): number[] {
    let keys = this.keys.get(field);
    if (!keys) this.keys.set(field, (keys = []));
    const { table } = this.base;
    const order = this.base.single([{ field, descending: false }]);
    const { ranks, distinct } = this.base.ranks(field);
    for (let i = keys.length; i < this.added.count; i++) {
      const value = this.added.name(i, field);
      const lo = lowerBound(
        order.length,
        (mid) => this.compareValues(field, table.name(order[mid]!, field), value) < 0,
      );
      const rank = lo < order.length ? ranks[order[lo]!]! : distinct;
      const equal = lo < order.length && this.compareValues(field, table.name(order[lo]!, field), value) === 0;
      keys.push(equal ? 2 * rank + 1 : 2 * rank);
    }
    return keys;
  }

  private compareValues(field: NameField, a: string, b: string): number {
    return a === b ? 0 : (this.base.compareOf(field) satisfies Compare)(a, b);
  }
}
