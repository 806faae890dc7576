import { describe, expect, it } from 'vitest';
import { pageCount, pageSizeFrom, paginate } from '../src/core/paginate.js';

describe('pageSizeFrom reads page_size as DRF does', () => {
  it.each([
    ['absent → default', undefined, 10n],
    ['positive integer', '20', 20n],
    ['zero → default', '0', 10n],
    ['negative → default', '-5', 10n],
    ['letters → default', 'abc', 10n],
    ['empty → default', '', 10n],
    ['exponent → default', '1e3', 10n],
    ['decimal → default', '7.0', 10n],
    ['spaces around are fine', ' 7 ', 7n],
    ['beyond 2^53: exact', '1000000000000000000000', 10n ** 21n],
    ['4300 digits: exact', '9'.repeat(4300), 10n ** 4300n - 1n],
    ['4301 digits: int() refuses it → default', '9'.repeat(4301), 10n],
    ['#13 U+001C before the number: int() refuses it → default', '\x1c5', 10n],
  ])('%s', (_, param, expected) => {
    expect(pageSizeFrom(param)).toBe(expected);
  });
});

describe('paginate finds the page slice or refuses the page', () => {
  it.each([
    ['first page by default', 48, 10, undefined, { number: 1, pages: 5, start: 0, end: 10 }],
    ['explicit page 1', 48, 10, '1', { number: 1, pages: 5, start: 0, end: 10 }],
    ['middle page', 48, 10, '2', { number: 2, pages: 5, start: 10, end: 20 }],
    ['short last page', 48, 10, '5', { number: 5, pages: 5, start: 40, end: 48 }],
    ['last keyword', 48, 10, 'last', { number: 5, pages: 5, start: 40, end: 48 }],
    ['exact multiple', 40, 10, '4', { number: 4, pages: 4, start: 30, end: 40 }],
    ['size over count: one page', 48, 100, undefined, { number: 1, pages: 1, start: 0, end: 48 }],
    ['size of one: page 48', 48, 1, '48', { number: 48, pages: 48, start: 47, end: 48 }],
    ['empty dataset has page 1', 0, 10, undefined, { number: 1, pages: 1, start: 0, end: 0 }],
    ['empty dataset, last', 0, 10, 'last', { number: 1, pages: 1, start: 0, end: 0 }],
    ['huge size', 48, Number.MAX_SAFE_INTEGER, '1', { number: 1, pages: 1, start: 0, end: 48 }],
    ['Arabic-Indic page number', 48, 10, '٢', { number: 2, pages: 5, start: 10, end: 20 }],
  ])('%s', (_, count, size, page, expected) => {
    expect(paginate(count, size, page)).toEqual(expected);
  });

  it.each([
    ['past the end', 48, 10, '6'],
    ['zero', 48, 10, '0'],
    ['negative', 48, 10, '-1'],
    ['letters', 48, 10, 'abc'],
    ['empty', 48, 10, ''],
    ['decimal', 48, 10, '2.0'],
    ['LAST is not last', 48, 10, 'LAST'],
    ['page 2 of an empty dataset', 0, 10, '2'],
    ['page 2 of a single page', 48, 99999, '2'],
    ['astronomically large', 48, 10, '9'.repeat(40)],
  ])('%s → invalid page', (_, count, size, page) => {
    expect(paginate(count, size, page)).toBeNull();
  });

  it.each([
    [0, 10, 1],
    [1, 10, 1],
    [10, 10, 1],
    [11, 10, 2],
    [48, 7, 7],
  ])('pageCount(%d, %d) = %d', (count, size, pages) => {
    expect(pageCount(count, size)).toBe(pages);
  });
});

// Django's num_pages is ceil(hits / size) in floats: it is 0 once hits / size rounds to 0.0,
// i.e. size >= hits * 2^1075 (2^-1075 is half the smallest float, which rounds to even: 0).
describe('a page size so large that Django counts 0 pages (found by the DRF oracle)', () => {
  const zeroFrom = (count: number) => BigInt(Math.max(1, count)) << 1075n;
  it.each([
    ['2^1024 (beyond the largest float: still 1 page)', 48, 2n ** 1024n, 1],
    ['10^309', 48, 10n ** 309n, 1],
    ['just below hits * 2^1075', 48, zeroFrom(48) - 1n, 1],
    ['hits * 2^1075', 48, zeroFrom(48), 0],
    ['beyond', 48, zeroFrom(48) + 1n, 0],
    ['an empty dataset counts 1 hit', 0, 2n ** 1075n, 0],
    ['an empty dataset, just below', 0, 2n ** 1075n - 1n, 1],
  ])('%s', (_, count, size, pages) => {
    expect(pageCount(count, size)).toBe(pages);
  });

  it.each([
    ['page=last is page 0: invalid', 'last', null],
    ['page 1 still exists (an empty first page is allowed)', '1', { number: 1, pages: 0, start: 0, end: 48 }],
    ['no page given: page 1', undefined, { number: 1, pages: 0, start: 0, end: 48 }],
    ['page 2: invalid', '2', null],
  ])('%s', (_, page, expected) => {
    expect(paginate(48, 48n << 1075n, page)).toEqual(expected);
  });
});
