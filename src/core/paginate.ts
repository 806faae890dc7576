import { ROUTES } from './route-table.js';
import { parsePyIntNumber } from './python-text.js';

export const DEFAULT_PAGE_SIZE = 10;

/**
 * DRF's PageNumberPagination page size: a positive integer as Python's int() reads it, else the
 * default. Exact, as Python holds it: a size of 400 digits is not the same as one of 20 (see pageCount).
 */
export function pageSizeFrom(param: string | undefined, defaultSize = DEFAULT_PAGE_SIZE): bigint {
  return BigInt(pageSizeOf(param, defaultSize));
}

/** pageSizeFrom(), as a number where it is one of at most 15 digits (most): no BigInt made per request. */
export function pageSizeOf(param: string | undefined, defaultSize = DEFAULT_PAGE_SIZE): number | bigint {
  const size = param === undefined ? null : parsePyIntNumber(param);
  return size === null || size <= 0 ? defaultSize : size;
}

/**
 * Django's Paginator.num_pages: `ceil(max(1, count) / size)` with Python's float division, which
 * is correctly rounded, so it underflows to 0.0 (no pages at all) once size >= hits * 2^1075.
 */
export function pageCount(count: number, pageSize: number | bigint): number {
  const hits = Math.max(1, count);
  if (typeof pageSize === 'bigint') {
    // The 1075-bit bound is made only for a size of at least every city (a live page's size is smaller).
    if (pageSize >= BigInt(hits)) return pageSize >= BigInt(hits) << 1075n ? 0 : 1;
    pageSize = Number(pageSize);
  }
  return Math.ceil(hits / pageSize);
}

export interface PageSlice {
  /** 1-based page number. */
  readonly number: number;
  readonly pages: number;
  /** Positions [start, end) of the ordered dataset on this page. */
  readonly start: number;
  readonly end: number;
}

/**
 * Django's Paginator.page() with DRF's page parameter: absent means 1, `last` the last page,
 * else an integer as int() reads it in 1..pages, where page 1 always exists (an empty dataset,
 * or a size so large the page count underflowed to 0). Null where the reference answers
 * 404 "Invalid page." (`last` of zero pages is page 0).
 */
export function paginate(count: number, pageSize: number | bigint, pageParam: string | undefined): PageSlice | null {
  const pages = pageCount(count, pageSize);
  let number: number;
  if (pageParam === undefined) number = 1;
  else if (pageParam === ROUTES.lastPage) number = pages;
  else {
    const parsed = parsePyIntNumber(pageParam);
    if (parsed === null || parsed < 1 || (parsed > pages && Number(parsed) !== 1)) return null;
    number = Number(parsed);
  }
  if (number < 1) return null;
  const size = pageSize >= count ? count : Number(pageSize);
  const start = (number - 1) * size;
  return { number, pages, start, end: Math.min(count, start + size) };
}
