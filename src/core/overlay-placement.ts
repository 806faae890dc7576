import type { CityTable } from './city-table.js';
import type { NameField } from './fields.js';

// Where the cities added to an OverlayIndex go in one ordering of its base, by binary search:
// the base's order is never sorted again, and a placement kept is extended, not redone.

/**
 * Where the added cities go in one ordering: `sorted`, the first `covered` added cities in the
 * ordering; `before[j]`, how many base cities precede `sorted[j]` (so its place is before[j] + j).
 */
export interface Placement {
  readonly covered: number;
  readonly sorted: Uint32Array;
  readonly before: Uint32Array;
}

/** One ordering term as keys: a base city's and an added city's, comparable as integers. */
export interface Term {
  readonly sign: 1 | -1;
  readonly base: (position: number) => number;
  readonly added: (city: number) => number;
  /** Set for a name field: two added cities with the same even key (between two base ranks) compare by value. */
  readonly field?: NameField;
}

/**
 * `kept` (or nothing) extended to every added city: those not yet placed are sorted by `terms`
 * (added cities whose keys tie between two base ranks by `compareValues`, then by id), placed in
 * the base's `order` (given when first needed) by binary search, and merged with those kept.
 */
export function extendPlacement(
  terms: readonly Term[],
  kept: Placement | undefined,
  added: CityTable,
  baseIds: Float64Array,
  baseOrder: () => Uint32Array,
  compareValues: (field: NameField, a: string, b: string) => number,
): Placement {
  const compareAdded = (i: number, k: number): number => {
    for (const term of terms) {
      const a = term.added(i);
      const b = term.added(k);
      if (a !== b) return term.sign * (a - b);
      if (term.field && a % 2 === 0) {
        const order = compareValues(term.field, added.name(i, term.field), added.name(k, term.field));
        if (order) return term.sign * order;
      }
    }
    return added.ids[i]! - added.ids[k]!;
  };
  const baseFirst = (p: number, i: number): boolean => {
    for (const term of terms) {
      const a = term.base(p);
      const b = term.added(i);
      if (a !== b) return term.sign * (a - b) < 0;
    }
    return baseIds[p]! < added.ids[i]!;
  };
  const covered = kept?.covered ?? 0;
  const fresh = Array.from({ length: added.count - covered }, (_, i) => covered + i).sort(compareAdded);
  const order = baseOrder();
  const freshBefore = fresh.map((i) => lowerBound(order.length, (mid) => baseFirst(order[mid]!, i)));
  // Merged with those kept: both sorted, no two added cities equal (ids differ).
  const total = added.count;
  const sorted = new Uint32Array(total);
  const before = new Uint32Array(total);
  const old = kept ?? { sorted: new Uint32Array(0), before: new Uint32Array(0) };
  for (let o = 0, f = 0, w = 0; w < total; w++) {
    const takeOld = f >= fresh.length || (o < old.sorted.length && compareAdded(old.sorted[o]!, fresh[f]!) < 0);
    sorted[w] = takeOld ? old.sorted[o]! : fresh[f]!;
    before[w] = takeOld ? old.before[o++]! : freshBefore[f++]!;
  }
  return { covered: total, sorted, before };
}

/** How many added cities are placed before merged position `at` (their places, before[j] + j, increase). */
export function placedBefore(before: Uint32Array, at: number): number {
  return lowerBound(before.length, (j) => before[j]! + j < at);
}

/** The first of 0..n-1 for which `below` is false, or n: `below` holds for a prefix (binary search). */
export function lowerBound(n: number, below: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (below(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
