import type { CityTable } from './city-table.js';
import type { Compare } from './collation.js';
import type { NameField } from './fields.js';
import type { Ordering } from './ordering.js';
import type { Ranks } from './rank-order.js';

// A CityIndex kept up to date as cities are appended to its table (a batch of POSTs), without
// ranking or sorting again: each new city's rank is found by binary search among one city of each
// rank, and each kept order gets the new positions merged in where a sort would have put them.
// One linear pass per field and per order for the whole batch (not one per city: 16 cities at
// 140,000 made 16 copies of every array), no comparator sort of the old cities: milliseconds where
// ranking a field anew takes seconds.

/** `ranks` of `table`'s positions before `from`, extended to every position after (the appended cities). */
export function rankAppended(
  { ranks, distinct }: Ranks,
  table: CityTable,
  field: NameField,
  compare: Compare,
  from: number,
): Ranks {
  const count = table.count;
  const someOf = new Uint32Array(distinct);
  for (let i = 0; i < from; i++) someOf[ranks[i]!] = i;
  const cmp = (a: string, b: string) => (a === b ? 0 : compare(a, b));
  // Each new city: the old rank it equals, or the slot (the first old rank after it) of a new one.
  const equal = new Int32Array(count - from).fill(-1);
  const fresh: { position: number; slot: number; value: string }[] = [];
  for (let position = from; position < count; position++) {
    const value = table.name(position, field);
    let lo = 0;
    let hi = distinct;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const order = cmp(value, table.name(someOf[mid]!, field));
      if (order === 0) {
        lo = -1 - mid;
        break;
      }
      if (order < 0) hi = mid;
      else lo = mid + 1;
    }
    if (lo < 0) equal[position - from] = -1 - lo;
    else fresh.push({ position, slot: lo, value });
  }
  // New ranks: those of the same slot sorted, equal values sharing one; each is slot + how many new ones precede it.
  fresh.sort((a, b) => a.slot - b.slot || cmp(a.value, b.value));
  const out = new Uint32Array(count);
  const below = new Uint32Array(distinct + 1); // below[r]: new ranks placed before old rank r
  let made = 0;
  for (let i = 0; i < fresh.length; i++) {
    const { position, slot, value } = fresh[i]!;
    if (i === 0 || slot !== fresh[i - 1]!.slot || cmp(value, fresh[i - 1]!.value) !== 0) made++;
    out[position] = slot + made - 1;
    if (slot < distinct) below[slot + 1] = made;
  }
  for (let r = 1; r <= distinct; r++) below[r] = Math.max(below[r]!, below[r - 1]!);
  if (made) for (let i = 0; i < from; i++) out[i] = ranks[i]! + below[ranks[i]! + 1]!;
  else out.set(ranks.subarray(0, from));
  for (let j = 0; j < equal.length; j++) if (equal[j]! >= 0) out[from + j] = equal[j]! + below[equal[j]! + 1]!;
  return { ranks: out, distinct: distinct + made };
}

/**
 * `order` (the table's positions before `from` in `ordering`, ties by id ascending) with every
 * position from `from` on merged in its place. `rankOf` gives the ranks the ordering's field has
 * now; the default ordering is `-top`, then name_en.
 */
export function orderAppended(
  order: Uint32Array,
  ordering: Ordering,
  from: number,
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
  return merged(order, from, table.count, before);
}

/** Positions by id ascending, with every position from `from` on merged in. */
export function idOrderAppended(order: Uint32Array, from: number, ids: Float64Array): Uint32Array {
  return merged(order, from, ids.length, (p, q) => ids[p]! < ids[q]!);
}

/** `order` with positions `from` to `count` - 1 merged in, each where `before` puts it. */
function merged(
  order: Uint32Array,
  from: number,
  count: number,
  before: (p: number, q: number) => boolean,
): Uint32Array {
  const added = Array.from({ length: count - from }, (_, i) => from + i);
  added.sort((p, q) => (before(p, q) ? -1 : before(q, p) ? 1 : 0));
  const out = new Uint32Array(order.length + added.length);
  let copied = 0;
  let written = 0;
  for (const position of added) {
    let lo = copied;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(order[mid]!, position)) lo = mid + 1;
      else hi = mid;
    }
    out.set(order.subarray(copied, lo), written);
    written += lo - copied;
    copied = lo;
    out[written++] = position;
  }
  out.set(order.subarray(copied), written);
  return out;
}
