import { describe, expect, it } from 'vitest';
import { parseQuery } from '../src/core/query-string.js';
import { staticPathFor } from '../src/site/layout.js';

const settings = { count: 48, pageSizes: [10, 20, 50, 100] };

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
    ['any size >= count is the all-cities page', 'page_size=48', 'cities/default/all.json'],
    ['huge size', 'page_size=1000000000000000000000', 'cities/default/all.json'],
    ['huge size, last page', 'ordering=name_tr&page_size=999&page=last', 'cities/name_tr/all.json'],
  ])('%s: ?%s', (_, qs, expected) => {
    expect(staticPathFor(parseQuery(qs), settings)).toBe(expected);
  });

  it.each([
    ['unaccepted ordering keeps its name in links', 'ordering=id'],
    ['empty ordering', 'ordering='],
    ['multi-field ordering', 'ordering=name_en,-name_ar'],
    ['repeated parameter', 'ordering=name_en&ordering=-name_ar'],
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

  // Found by the DRF oracle: int() refuses more than 4300 digits, and Django's float page count is 0 from count * 2^1075.
  it.each([
    ['300 digits, last page: the all-cities page', `page_size=1${'0'.repeat(299)}&page=last`, 'cities/default/all.json'],
    ['301 digits is answered live (exactly, as Django pages it)', `page_size=1${'0'.repeat(300)}&page=last`, null],
    ['4301 digits (int() refuses it: the default size) is answered live', `page_size=1${'0'.repeat(4300)}`, null],
    ['a size for which Django counts 0 pages, page=last, is answered live', `page_size=${48n << 1075n}&page=last`, null],
    ['a size for which Django counts 0 pages is answered live', `page_size=${48n << 1075n}`, null],
  ])('%s', (_, qs, expected) => {
    expect(staticPathFor(parseQuery(qs), settings)).toBe(expected);
  });

  it('an empty dataset maps every size to the all-cities page', () => {
    expect(staticPathFor(parseQuery('page_size=7'), { count: 0, pageSizes: [10] })).toBe('cities/default/all.json');
  });
});
