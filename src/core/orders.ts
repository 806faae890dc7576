import type { NameField } from './fields.js';
import { orderingKey, type Ordering } from './ordering.js';
import { finish, sortByRankSteps, type Ranks } from './rank-order.js';

/** Orders composed and kept besides the single-field ones (each is 4 bytes a city). */
export const MULTI_FIELD_CACHE = 64;
/** A page whose first-term ties span at most this many cities is ordered alone, without a whole order. */
const WINDOW = 4096;
/**
 * The same with a composer (a server's thread): the window's comparator sort runs on the thread
 * that answers (about 0.4 ms for 1,024 at 140k cities, 3-5 ms for 4,096 on the loaded 2-core
 * machine), so a larger span is composed whole, elsewhere.
 */
const COMPOSER_WINDOW = 1024;
/** Cities a composition handles between two pauses (compose()): well under a millisecond of work. */
const STEP = 16_384;

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
 * Composes a multi-field order elsewhere (a thread: http/compose-thread.ts) from the source's
 * ranks and the last term's single-field order; the same order the steps give, or a rejection
 * (then it is composed here, in steps).
 */
export type Composer = (terms: Ordering, source: OrderSource) => Promise<Uint32Array>;

/**
 * Multi-field orderings from a source's single-field ones: composed by counting sorts (linear
 * passes, see rank-order.ts) and kept in a small LRU, or for one page only its window.
 * Orders are keyed by orderingKey(), which is injective: parseOrdering(orderingKey(o)) is o.
 */
export class Orders {
  private readonly multi = new Map<string, Uint32Array>();
  private readonly composing = new Map<string, Promise<Uint32Array>>();
  private readonly windowSize: number;

  constructor(
    private readonly source: OrderSource,
    private readonly cacheSize = MULTI_FIELD_CACHE,
    private readonly composer?: Composer,
  ) {
    this.windowSize = composer ? COMPOSER_WINDOW : WINDOW;
  }

  /** Dataset positions in the given ordering, ties broken by id ascending. */
  order(ordering: Ordering): Uint32Array {
    const terms = this.decisive(ordering);
    if (terms.length <= 1) return this.source.single(terms);
    const key = orderingKey(terms);
    const order = this.multi.get(key) ?? finish(this.steps(terms));
    this.keep(key, order);
    return order;
  }

  /**
   * Whether positions(ordering, start, end) would compose a whole multi-field order not kept:
   * the work compose() does in steps beforehand, so that answering the page is then quick.
   */
  composes(ordering: Ordering, start: number, end: number): boolean {
    const terms = this.decisive(ordering);
    return terms.length > 1 && end > start && !this.multi.has(orderingKey(terms)) && !this.window(terms, start, end);
  }

  /**
   * Composes (and keeps) a multi-field order: by the composer when there is one, else (or when
   * it fails) here, awaiting `pause()` after each step of at most STEP cities, so that other
   * requests are answered meanwhile. Concurrent calls for one order share it.
   */
  compose(ordering: Ordering, pause: () => Promise<void>): Promise<Uint32Array> {
    const terms = this.decisive(ordering);
    if (terms.length <= 1) return Promise.resolve(this.source.single(terms));
    const key = orderingKey(terms);
    const kept = this.multi.get(key);
    if (kept) return Promise.resolve(kept);
    let composing = this.composing.get(key);
    if (!composing) {
      composing = (async () => {
        const composed = await this.composer?.(terms, this.source).catch(() => undefined);
        if (composed) return this.keep(key, composed);
        const steps = this.steps(terms);
        for (let next = steps.next(); ; next = steps.next()) {
          if (next.done) return this.keep(key, next.value);
          await pause();
        }
      })().finally(() => this.composing.delete(key));
      this.composing.set(key, composing);
    }
    return composing;
  }

  /** LSD: from the last term's presorted order, stable passes for each earlier term. */
  private *steps(terms: Ordering): Generator<void, Uint32Array> {
    let order = this.source.single(terms.slice(-1));
    for (let i = terms.length - 2; i >= 0; i--)
      order = yield* sortByRankSteps(order, this.source.ranks(terms[i]!.field), terms[i]!.descending, STEP);
    return order;
  }

  /** Drops the orders kept (those being composed are kept once done). */
  forget(): void {
    this.multi.clear();
  }

  /** Keeps an order as the most recently used. */
  private keep(key: string, order: Uint32Array): Uint32Array {
    if (this.cacheSize <= 0) return order;
    if (!this.multi.delete(key) && this.multi.size >= this.cacheSize)
      this.multi.delete(this.multi.keys().next().value!);
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
    const whole = terms.length <= 1 ? this.source.single(terms) : this.multi.get(orderingKey(terms));
    if (whole || end <= start) return (whole ?? this.order(terms)).subarray(start, end);
    const window = this.window(terms, start, end);
    if (!window) return this.order(terms).subarray(start, end);
    const { lo, cities } = window;
    const keys = terms.map((t) => ({ ranks: this.source.ranks(t.field).ranks, sign: t.descending ? -1 : 1 }));
    // Ties on every term keep their places in the first term's order, which are by id ascending.
    const at = Uint32Array.from({ length: cities.length }, (_, i) => i).sort((a, b) => {
      const p = cities[a]!,
        q = cities[b]!;
      for (const key of keys) if (key.ranks[p] !== key.ranks[q]) return key.sign * (key.ranks[p]! - key.ranks[q]!);
      return a - b;
    });
    return at.subarray(start - lo, end - lo).map((i) => cities[i]!);
  }

  /**
   * The first term's presorted order already places the page up to its ties on that term: the
   * cities of the first and last rank the page touches, when they are at most the window size.
   */
  private window(terms: Ordering, start: number, end: number): { lo: number; cities: Uint32Array } | null {
    const first = this.source.single(terms.slice(0, 1));
    const { ranks } = this.source.ranks(terms[0]!.field);
    let lo = start;
    let hi = end;
    while (lo > 0 && ranks[first[lo - 1]!] === ranks[first[lo]!]) lo--;
    while (hi < this.source.count && ranks[first[hi]!] === ranks[first[hi - 1]!]) hi++;
    return hi - lo > this.windowSize ? null : { lo, cities: first.subarray(lo, hi) };
  }

  /** The terms that can decide: none after one whose ranks are all distinct. */
  decisive(ordering: Ordering): Ordering {
    const at = ordering.findIndex((t) => this.source.distinct(t.field) === this.source.count);
    return at < 0 ? ordering : ordering.slice(0, at + 1);
  }
}
