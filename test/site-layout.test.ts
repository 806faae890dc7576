import { describe, expect, it } from 'vitest';
import { parseQuery } from '../src/core/query-string.js';
import { fileKeyFor, queryForFile, staticPathFor } from '../src/site/layout.js';
import { testSpec } from './helpers.js';

const settings = testSpec({ count: 48, pageSizes: [10, 20, 50, 100] });

describe('staticPathFor maps a query to the file that answers it', () => {
  it.each([
    ['no query', '', 'cities/default/default/1.json'],
    ['page=1 is the first page', 'page=1', 'cities/default/default/1.json'],
    ['a page', 'page=2', 'cities/default/default/2.json'],
    ['the last page number', 'page=5', 'cities/default/default/5.json'],
    ['page=last', 'page=last', 'cities/default/default/last.json'],
    ['an ordering', 'ordering=name_en', 'cities/name_en/default/1.json'],
    ['a descending ordering and page', 'ordering=-name_ar&page=5', 'cities/-name_ar/default/5.json'],
    ['explicit default size is its own file (links differ)', 'page_size=10', 'cities/default/10/1.json'],
    ['parameters in any order', 'page=2&page_size=20&ordering=-name_ar', 'cities/-name_ar/20/2.json'],
    ['configured size over count', 'page_size=100', 'cities/default/100/1.json'],
    ['any size >= count is the all-cities page', 'page_size=48', 'cities/default/all-48.json'],
    ['huge size', 'page_size=1000000000000000000000', 'cities/default/all-48.json'],
    ['huge size, last page', 'ordering=name_tr&page_size=999&page=last', 'cities/name_tr/all-48.json'],
  ])('%s: ?%s', (_, qs, expected) => {
    expect(staticPathFor(parseQuery(qs), settings)).toBe(expected);
  });

  it.each([
    ['unaccepted ordering keeps its name in links', 'ordering=id'],
    ['empty ordering', 'ordering='],
    ['multi-field ordering', 'ordering=name_en,-name_ar'],
    ['repeated parameter', 'ordering=name_en&ordering=-name_ar'],
    ['repeated page size', 'page_size=20&page=2&page_size=20'],
    ['repeated page, the first empty', 'page=&page=2'],
    ['repeated page, the same twice', 'page=2&page=2'],
    ['unknown parameter', 'foo=bar'],
    ['format parameter', 'format=json'],
    ['unconfigured size', 'page_size=7&page=3'],
    ['invalid size keeps its spelling in links', 'page_size=abc'],
    ['zero size', 'page_size=0'],
    ['size with a plus sign', 'page_size=+20'],
    ['page out of range', 'page=6'],
    ['page zero', 'page=0'],
    ['page with leading zero', 'page=02'],
    ['page 2 of the all-cities page', 'page_size=99999&page=2'],
    ['spaces in ordering', 'ordering=%20name_en'],
    ['#12 a BOM before the page number (int() refuses it)', 'page=%EF%BB%BF2'],
    ['#12 a BOM before the ordering field', 'ordering=%EF%BB%BFname_en'],
    ['#12 a BOM before a parameter name', '%EF%BB%BFpage=2'],
  ])('%s: ?%s is answered live', (_, qs) => {
    expect(staticPathFor(parseQuery(qs), settings)).toBeNull();
  });

  it.each([
    ['a built ordering', 'ordering=-name_ar&page=2', 'cities/-name_ar/default/2.json'],
    ['an ordering not built', 'ordering=name_fr', null],
    ['the default ordering when not built', 'page=2', null],
  ])('with only some orderings built: %s', (_, qs, expected) => {
    expect(staticPathFor(parseQuery(qs), { ...settings, orderings: ['name_ar', '-name_ar'] })).toBe(expected);
  });

  it.each<[string, number, string, string | null]>([
    ['a page within the first pages', 3, 'page=3', 'cities/default/default/3.json'],
    ['the page past them is answered live', 3, 'page=4', null],
    ['at another size too', 3, 'page_size=20&page=4&ordering=name_en', null],
    ['the last page stays a file', 3, 'page=last', 'cities/default/default/last.json'],
    ['page 1 without a page parameter', 1, '', 'cities/default/default/1.json'],
    ['no first page at all: page 1 is live', 0, 'page=1', null],
    ['the page of all cities stays a file', 0, 'page_size=48', 'cities/default/all-48.json'],
  ])("a site of each list's first pages (--for cloudflare): %s", (_, firstPages, qs, expected) => {
    expect(staticPathFor(parseQuery(qs), { ...settings, firstPages })).toBe(expected);
  });

  // Found by the DRF oracle: int() refuses more than 4300 digits, and Django's float page count is 0 from count * 2^1075.
  it.each([
    [
      '300 digits, last page: the all-cities page',
      `page_size=1${'0'.repeat(299)}&page=last`,
      'cities/default/all-48.json',
    ],
    ['301 digits is answered live (exactly, as Django pages it)', `page_size=1${'0'.repeat(300)}&page=last`, null],
    ['4301 digits (int() refuses it: the default size) is answered live', `page_size=1${'0'.repeat(4300)}`, null],
    [
      'a size for which Django counts 0 pages, page=last, is answered live',
      `page_size=${48n << 1075n}&page=last`,
      null,
    ],
    ['a size for which Django counts 0 pages is answered live', `page_size=${48n << 1075n}`, null],
  ])('%s', (_, qs, expected) => {
    expect(staticPathFor(parseQuery(qs), settings)).toBe(expected);
  });

  it('an empty dataset maps every size to the all-cities page', () => {
    expect(staticPathFor(parseQuery('page_size=7'), testSpec({ count: 0, pageSizes: [10] }))).toBe(
      'cities/default/all-0.json',
    );
  });
});

describe('fileKeyFor: the file a query maps to knowing no setting (what a host config holding no fact maps)', () => {
  it.each([
    ['no query', '', undefined, 'cities/default/default/1.json'],
    ['a page of a size no site may have built', 'page_size=7&page=3', undefined, 'cities/default/7/3.json'],
    ['a page beyond any range', 'page=99999', undefined, 'cities/default/default/99999.json'],
    [
      'a size >= count with the count known: the all-cities file named after it',
      'page_size=1000&ordering=-name_ar',
      48,
      'cities/-name_ar/all-48.json',
    ],
    [
      'the same without the count: a page file',
      'page_size=1000&ordering=-name_ar',
      undefined,
      'cities/-name_ar/1000/1.json',
    ],
    ['a size >= count on page 2 is a page file', 'page_size=1000&page=2', 48, 'cities/default/1000/2.json'],
    ['a multi-field ordering: no file', 'ordering=name_en,name_ar', 48, null],
    ['an extra parameter: no file', 'page=2&x=1', 48, null],
    ['16 digits of page: no file', `page=${'1'.repeat(16)}`, 48, null],
  ])('%s: ?%s', (_, qs, count, expected) => {
    expect(fileKeyFor(parseQuery(qs), count)).toBe(expected);
  });
});

describe("queryForFile: what a request for a file's path asks, as the live side answers a host's failover", () => {
  it.each([
    [
      'a page file, no query: its canonical query',
      '/cities/-name_ar/20/3.json',
      '',
      [
        ['ordering', '-name_ar'],
        ['page_size', '20'],
        ['page', '3'],
      ],
    ],
    ['page 1 of the default size: no parameter', '/cities/default/default/1.json', '', []],
    [
      'the query that mapped to it is kept as asked',
      '/cities/default/20/1.json',
      'page=1&page_size=20',
      [
        ['page', '1'],
        ['page_size', '20'],
      ],
    ],
    [
      'an all-cities file keeps the size asked',
      '/cities/name_en/all-11.json',
      'ordering=name_en&page_size=1000',
      [
        ['ordering', 'name_en'],
        ['page_size', '1000'],
      ],
    ],
    [
      'an all-cities file, no query: the size in its name',
      '/cities/name_en/all-11.json',
      '',
      [
        ['ordering', 'name_en'],
        ['page_size', '11'],
      ],
    ],
    ['a query of another file', '/cities/default/20/1.json', 'page_size=50', null],
    ['a size below the count of an all-cities file', '/cities/default/all-48.json', 'page_size=20', null],
    ['no file of the route table', '/cities/default/20/x.json', '', null],
    ['a leading zero is no file', '/cities/default/020/1.json', '', null],
    ['the endpoint is no file', '/cities/', '', null],
    ['a meta file is no page', '/_cities-api/manifest.json', '', null],
  ])('%s: %s?%s', (_, path, qs, expected) => {
    expect(queryForFile(path, parseQuery(qs))).toEqual(expected);
  });

  it('every page file stands for a query that maps back to it on any site; on a site holding it, staticPathFor maps it there too', () => {
    const spec = testSpec({ count: 23, pageSizes: [5, 50] });
    for (const ordering of ['default', 'name_en', '-name_tr']) {
      for (const size of ['default', '5', '7', '50']) {
        for (const page of ['1', '2', '3', 'last']) {
          const path = `/cities/${ordering}/${size}/${page}.json`;
          const pairs = queryForFile(path, []);
          expect(pairs, path).not.toBeNull();
          expect(`/${fileKeyFor(pairs!)}`).toBe(path);
          const held = size !== '7' && !(size === '50' && (page === '2' || page === '3'));
          expect(staticPathFor(pairs!, spec), path).toBe(held ? path.slice(1) : null);
        }
      }
    }
  });
});
