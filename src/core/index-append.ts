import type { CityTable } from './city-table.js';
import type { Compare } from './collation.js';
import type { NameField } from './fields.js';
import type { Ordering } from './ordering.js';
import type { Ranks } from './rank-order.js';

// A CityIndex kept up to date as cities are appended to its table (a POST), without ranking or
// sorting again: each new city's rank is found by binary search among one city of each rank, and
// each kept order gets the new position inserted where a sort would have put it. Linear copies,
// no comparator sort: milliseconds at 140,000 cities where ranking a field anew takes seconds.

/** `ranks` of `table`'s first positions, extended to the city at `position` (the next one). */
export function rankAppended(
  { ranks, distinct }: Ranks,
  table: CityTable,
  field: NameField,
  compare: Compare,
  position: number,
): Ranks {
  const value = table.name(position, field);
  const someOf = new Uint32Array(distinct);
  for (let i = 0; i < position; i++) someOf[ranks[i]!] = i;
  let lo = 0;
  let hi = distinct;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const other = table.name(someOf[mid]!, field);
    const order = value === other ? 0 : compare(value, other);
    if (order === 0) return { ranks: withRank(ranks, position, mid, false), distinct };
    if (order < 0) hi = mid;
    else lo = mid + 1;
  }
  return { ranks: withRank(ranks, position, lo, true), distinct: distinct + 1 };
}

/** The ranks with `rank` at `position`; a new rank shifts every rank from it up by one. */
function withRank(ranks: Ranks['ranks'], position: number, rank: number, isNew: boolean): Uint32Array {
  const out = new Uint32Array(position + 1);
  if (isNew) for (let i = 0; i < position; i++) out[i] = ranks[i]! >= rank ? ranks[i]! + 1 : ranks[i]!;
  else out.set(ranks.subarray(0, position));
  out[position] = rank;
  return out;
}

/**
 * `order` (the table's first positions in `ordering`, ties by id ascending) with `position`
 * inserted in its place. `rankOf` gives the ranks the ordering's field has now; the default
 * ordering is `-top`, then name_en.
 */
export function orderAppended(
  order: Uint32Array,
  ordering: Ordering,
  position: number,
  table: CityTable,
  rankOf: (field: NameField) => Ranks['ranks'],
): Uint32Array {
  const [term] = ordering;
  const ranks = rankOf(term?.field ?? 'name_en');
  const sign = term?.descending ? -1 : 1;
  const { ids, top } = table;
  const before = (p: number, q: number): boolean => {
    if (!term && top[p] !== top[q]) return top[p]! > top[q]!;
    if (ranks[p] !== ranks[q]) return sign * (ranks[p]! - ranks[q]!) < 0;
    return ids[p]! < ids[q]!;
  };
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(order[mid]!, position)) lo = mid + 1;
    else hi = mid;
  }
  return inserted(order, lo, position);
}

/** Positions by id ascending, with `position` inserted. */
export function idOrderAppended(order: Uint32Array, position: number, ids: Float64Array): Uint32Array {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[order[mid]!]! < ids[position]!) lo = mid + 1;
    else hi = mid;
  }
  return inserted(order, lo, position);
}

function inserted(order: Uint32Array, at: number, value: number): Uint32Array {
  const out = new Uint32Array(order.length + 1);
  out.set(order.subarray(0, at));
  out[at] = value;
  out.set(order.subarray(at), at + 1);
  return out;
}
