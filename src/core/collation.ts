import { compareCodePoints } from './codepoint.js';
import { FIELD_LOCALES, type NameField } from './fields.js';

/** `locale`: each name field compared by an ICU collator of its language; `codepoint`: by code point. */
export type Collation = 'locale' | 'codepoint';

export const COLLATIONS: readonly Collation[] = ['locale', 'codepoint'];

export function isCollation(value: string): value is Collation {
  return (COLLATIONS as readonly string[]).includes(value);
}

export type Compare = (a: string, b: string) => number;

export function comparatorFor(field: NameField, collation: Collation): Compare {
  if (collation === 'codepoint') return compareCodePoints;
  return new Intl.Collator(FIELD_LOCALES[field]).compare;
}

/**
 * Dense ranks of values under a comparison: rank[i] < rank[j] iff values[i] sorts first, and
 * equal ranks for values the collation considers equal. Sorting once per field turns every later
 * ordering into integer comparisons.
 */
export function rankValues(values: readonly string[], compare: Compare): Uint32Array {
  const distinct = [...new Set(values)].sort(compare);
  const rankOf = new Map<string, number>();
  let rank = 0;
  for (let i = 0; i < distinct.length; i++) {
    if (i > 0 && compare(distinct[i - 1]!, distinct[i]!) !== 0) rank++;
    rankOf.set(distinct[i]!, rank);
  }
  const ranks = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) ranks[i] = rankOf.get(values[i]!)!;
  return ranks;
}
