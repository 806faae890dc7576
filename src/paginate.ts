import { parsePyInt } from './python-text.js';

export const DEFAULT_PAGE_SIZE = 10;

/**
 * DRF's PageNumberPagination page size: a positive integer as Python's int() reads it, else the
 * default. Sizes beyond the safe-integer range behave like any size >= count (one page).
 */
export function pageSizeFrom(param: string | undefined, defaultSize = DEFAULT_PAGE_SIZE): number {
  if (param === undefined) return defaultSize;
  const size = parsePyInt(param);
  if (size === null || size <= 0n) return defaultSize;
  return size > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(size);
}

export function pageCount(count: number, pageSize: number): number {
  return Math.max(1, Math.ceil(count / pageSize));
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
 * else an integer as int() reads it in 1..pages. Null where the reference answers
 * 404 "Invalid page." (an empty dataset still has one empty page 1).
 */
export function paginate(count: number, pageSize: number, pageParam: string | undefined): PageSlice | null {
  const pages = pageCount(count, pageSize);
  let number: number;
  if (pageParam === undefined) number = 1;
  else if (pageParam === 'last') number = pages;
  else {
    const parsed = parsePyInt(pageParam);
    if (parsed === null || parsed < 1n || parsed > BigInt(pages)) return null;
    number = Number(parsed);
  }
  const start = (number - 1) * pageSize;
  return { number, pages, start, end: Math.min(count, start + pageSize) };
}
