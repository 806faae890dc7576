import { isNameField } from '../core/fields.js';
import { pageCount, DEFAULT_PAGE_SIZE } from '../core/paginate.js';
import type { QueryPair } from '../core/query-string.js';

// Where each precomputed answer lives in the site, and which requests it answers:
//   cities/{ordering}/{page_size}/{page}.json   ordering: `default` or e.g. `name_en`, `-name_ar`
//                                               page_size: `default` (absent) or a configured size
//                                               page: 1..pages, and `last`
//   cities/{ordering}/all.json                  any page_size >= count (no links: one body fits all)
// A request maps to a file only when its parameters are exactly some of ordering, page and
// page_size, each once, in these canonical spellings; anything else is answered live.

export const SITE_DIR = 'cities';
export const DEFAULT_SEGMENT = 'default';

export interface LayoutSettings {
  readonly count: number;
  readonly pageSizes: readonly number[];
  /** Precomputed orderings; all 33 when absent. */
  readonly orderings?: readonly string[] | undefined;
}

export function pagePath(ordering: string, pageSize: number | typeof DEFAULT_SEGMENT, page: number | 'last'): string {
  return `${SITE_DIR}/${ordering}/${pageSize}/${page}.json`;
}

export function allPath(ordering: string): string {
  return `${SITE_DIR}/${ordering}/all.json`;
}

const POSITIVE = /^[1-9][0-9]*$/;

/** The site file holding the answer to a query, or null when the query must be answered live. */
export function staticPathFor(pairs: readonly QueryPair[], settings: LayoutSettings): string | null {
  let ordering = DEFAULT_SEGMENT;
  let size: string | undefined;
  let page: string | undefined;
  const seen = new Set<string>();
  for (const [name, value] of pairs) {
    if (seen.has(name)) return null;
    seen.add(name);
    if (name === 'ordering') {
      if (!isNameField(value.startsWith('-') ? value.slice(1) : value)) return null;
      ordering = value;
    } else if (name === 'page_size') size = value;
    else if (name === 'page') page = value;
    else return null;
  }
  if (settings.orderings && !settings.orderings.includes(ordering)) return null;
  const firstOrLast = page === undefined || page === '1' || page === 'last';
  if (size !== undefined) {
    if (!POSITIVE.test(size)) return null;
    const configured = settings.pageSizes.includes(Number(size));
    if (!configured) return firstOrLast && holdsAll(size, settings.count) ? allPath(ordering) : null;
  }
  const pageSize = size === undefined ? DEFAULT_PAGE_SIZE : Number(size);
  const sizeSegment = size === undefined ? DEFAULT_SEGMENT : pageSize;
  if (page === undefined || page === '1') return pagePath(ordering, sizeSegment, 1);
  if (page === 'last') return pagePath(ordering, sizeSegment, 'last');
  if (!POSITIVE.test(page) || page.length > 15 || Number(page) > pageCount(settings.count, pageSize)) return null;
  return pagePath(ordering, sizeSegment, Number(page));
}

/**
 * The most digits of a page_size the all-cities file answers. Up to this, any size >= count is
 * Django's one page (int() reads up to 4300 digits, and Django's float page count only drops to
 * 0 from count * 2^1075, about 10^323); larger sizes are answered live, exactly.
 */
export const ALL_PAGE_SIZE_DIGITS = 300;

/** Whether page_size (canonical digits) gives the one page of all cities. */
function holdsAll(size: string, count: number): boolean {
  return size.length <= ALL_PAGE_SIZE_DIGITS && BigInt(size) >= BigInt(count);
}
