import { isNameField, NAME_FIELDS, type NameField } from './fields.js';
import { pyStrip } from './python-text.js';
import { ROUTES } from './route-table.js';

export interface OrderTerm {
  readonly field: NameField;
  readonly descending: boolean;
}

/** Accepted terms in priority order; empty means the default ordering (`-top, name_en`). */
export type Ordering = readonly OrderTerm[];

export const DEFAULT_ORDERING: Ordering = [];

/**
 * DRF's OrderingFilter on the last `ordering` value: split on commas, strip each term, drop
 * terms whose field is not accepted (`id`, `top`, `bogus`...). A field named twice keeps its
 * first direction (a later term on the same field can never decide anything).
 */
export function parseOrdering(param: string | undefined): Ordering {
  if (!param) return DEFAULT_ORDERING;
  const terms: OrderTerm[] = [];
  const seen = new Set<string>();
  for (const raw of param.split(',')) {
    const term = pyStrip(raw);
    const descending = term.startsWith(ROUTES.descending);
    const field = descending ? term.slice(ROUTES.descending.length) : term;
    if (!isNameField(field) || seen.has(field)) continue;
    seen.add(field);
    terms.push({ field, descending });
  }
  return terms;
}

/** Whether an ordering parameter may name more than one field (it holds a comma): no other ordering is ever composed. */
export function mayBeMultiField(param: string | undefined): boolean {
  return param?.includes(',') ?? false;
}

/** A stable name for an ordering: `default`, `name_en`, `-name_ar`, `name_en,-name_ar`. */
export function orderingKey(ordering: Ordering): string {
  if (ordering.length === 0) return ROUTES.absent;
  return ordering.map((t) => (t.descending ? `${ROUTES.descending}${t.field}` : t.field)).join(',');
}

/** The default ordering plus every single accepted field, ascending and descending (33). */
export function singleOrderings(fields: readonly NameField[]): Ordering[] {
  return [
    DEFAULT_ORDERING,
    ...fields.flatMap((field) => [[{ field, descending: false }], [{ field, descending: true }]]),
  ];
}

/** The keys of the 33 orderings a site can precompute, in build order: `default`, `name_ar`, `-name_ar`, ... */
export const PRECOMPUTABLE_ORDERINGS: readonly string[] = singleOrderings(NAME_FIELDS).map(orderingKey);
