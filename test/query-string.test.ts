import { describe, expect, it } from 'vitest';
import {
  lastValue,
  moreFieldsThan,
  parseQuery,
  plainPairs,
  queryFieldCount,
  quotePlus,
  withParam,
  paramPlace,
} from '../src/core/query-string.js';
import { splitTarget } from '../src/core/url-path.js';

// Expected values are what Python's urllib.parse (parse_qsl, quote_plus) returns.
describe('parseQuery splits and decodes like parse_qsl(keep_blank_values=True)', () => {
  it.each([
    [
      'two pairs',
      'a=1&b=2',
      [
        ['a', '1'],
        ['b', '2'],
      ],
    ],
    ['name without =', 'a', [['a', '']]],
    ['empty value', 'a=', [['a', '']]],
    ['empty fields skipped', '&&a=1&', [['a', '1']]],
    ['only the first = splits', 'a=1=2', [['a', '1=2']]],
    ['plus is a space', 'a+b=c+d', [['a b', 'c d']]],
    ['invalid escape kept', 'x=%zz', [['x', '%zz']]],
    ['UTF-8 escape', 'x=%C3%A9', [['x', 'é']]],
    ['truncated UTF-8 → one U+FFFD', 'x=%E2%82', [['x', '\ufffd']]],
    ['invalid bytes → U+FFFD each', 'x=%ff%fe', [['x', '\ufffd\ufffd']]],
    ['overlong sequence → U+FFFD per byte', 'x=%F0%80%80', [['x', '\ufffd\ufffd\ufffd']]],
    ['encoded surrogate → U+FFFD per byte', 'x=%ED%A0%80', [['x', '\ufffd\ufffd\ufffd']]],
    ['raw non-ASCII passes through', 'x=é%41', [['x', 'éA']]],
    ['escapes decoded per ASCII run', 'x=%C3é%A9', [['x', '\ufffdé\ufffd']]],
    ['semicolon is not a separator', 'a=1;b=2', [['a', '1;b=2']]],
    // Each field's name and value are decoded on their own: a + or % in one says nothing of the other.
    ['an escape in the name only', 'page%5Fsize=3+', [['page_size', '3 ']]],
    [
      'a plus in the value only, a plain name after',
      'a=%41+b&c=d',
      [
        ['a', 'A b'],
        ['c', 'd'],
      ],
    ],
    ['a plus or escape after the first =', 'a=b=%41+', [['a', 'b=A ']]],
    [
      'a field that is only =',
      '=&=%41',
      [
        ['', ''],
        ['', 'A'],
      ],
    ],
    [
      'an escape in a name without =, then a plain field',
      '%41+&b=1',
      [
        ['A ', ''],
        ['b', '1'],
      ],
    ],
    [
      'names without =, between pairs: the = of a later field is not theirs',
      'a&b=1&c&d=',
      [
        ['a', ''],
        ['b', '1'],
        ['c', ''],
        ['d', ''],
      ],
    ],
    ['empty query', '', []],
  ])('%s: %j', (_, qs, expected) => {
    expect(parseQuery(qs)).toEqual(expected);
  });

  it('counts fields as Django does for DATA_UPLOAD_MAX_NUMBER_FIELDS', () => {
    expect(queryFieldCount('')).toBe(0);
    expect(queryFieldCount('a=1')).toBe(1);
    expect(queryFieldCount('a=1&&b')).toBe(3);
  });

  // A query shorter than the limit is not scanned: the boundary cases, counted as queryFieldCount counts.
  it.each([
    ['limit - 1 ampersands: exactly the limit', '&'.repeat(4), 5, false],
    ['limit ampersands: one over', '&'.repeat(5), 5, true],
    ['a long query of few fields', `a=${'x'.repeat(50)}&b=1`, 5, false],
    ['fields one character each, one over', 'a&b&c&d&e&f', 5, true],
    ['fields one character each, at the limit', 'a&b&c&d&e', 5, false],
    ['empty', '', 0, false],
  ])('moreFieldsThan: %s', (_, qs, limit, more) => {
    expect(moreFieldsThan(qs, limit)).toBe(more);
    expect(moreFieldsThan(qs, limit)).toBe(queryFieldCount(qs) > limit);
  });

  it('lastValue returns the last of repeated parameters, as QueryDict.get does', () => {
    expect(lastValue(parseQuery('ordering=name_en&ordering=-name_ar'), 'ordering')).toBe('-name_ar');
    expect(lastValue(parseQuery('a=1'), 'ordering')).toBeUndefined();
  });
});

describe("parseQuery of a query read in place in a request's target (from, to): the pairs of the query sliced out", () => {
  it.each([
    ['a plain query', '/cities/?page_size=7&page=3&n=12'],
    ['one to decode', '/cities/?q=a+b%20c&page=2'],
    ['a fragment after it', '/cities/?page=2&x#frag&y=1'],
    ['no query', '/cities/'],
    ['an empty query', '/cities/?'],
    ['a query of separators only', '/cities/?&&='],
  ])('%s', (_, target) => {
    const { query, queryAt } = splitTarget(target);
    const sliced = parseQuery(query);
    const slicedPlain = plainPairs(sliced);
    const inPlace = parseQuery(target, queryAt, queryAt + query.length);
    expect(inPlace).toEqual(sliced);
    expect(plainPairs(inPlace)).toBe(slicedPlain);
  });
});

describe('quotePlus encodes like Python quote_plus', () => {
  it.each([
    ['space', 'a b', 'a+b'],
    ['comma', 'name_en,-name_ar', 'name_en%2C-name_ar'],
    ['non-ASCII', 'é', '%C3%A9'],
    ['always-safe characters', '~._-', '~._-'],
    ['characters encodeURIComponent leaves', "!'()*", '%21%27%28%29%2A'],
    ['reserved characters', '/?&=+', '%2F%3F%26%3D%2B'],
    ['astral character', '𝒜', '%F0%9D%92%9C'],
  ])('%s', (_, text, expected) => {
    expect(quotePlus(text)).toBe(expected);
  });
});

/** Queries with a parameter set or removed, as DRF's replace_query_param / remove_query_param write them. */
const WITH_PARAM: [string, string, string, string | null, string][] = [
  ['sets page and sorts by name', 'page=2&foo=a%20b&ordering=name_en', 'page', '3', 'foo=a+b&ordering=name_en&page=3'],
  ['removes page', 'ordering=-name_ar&page=2&page_size=20', 'page', null, 'ordering=-name_ar&page_size=20'],
  [
    'more than eight names, sorted by code point',
    'page=2&z=1&é=2&y=3&b=4&a=5&page_size=6&ordering=7&A=8&_=9&x=10',
    'page',
    '3',
    'A=8&_=9&a=5&b=4&ordering=7&page=3&page_size=6&x=10&y=3&z=1&%C3%A9=2',
  ],
  [
    'keeps repeated values in order',
    'ordering=name_en&ordering=-name_ar&page=2',
    'page',
    '3',
    'ordering=name_en&ordering=-name_ar&page=3',
  ],
  ['keeps blank values', 'page_size=&x', 'page', '2', 'page=2&page_size=&x='],
  ['replaces repeated page by one value', 'page=1&page=2', 'page', '3', 'page=3'],
  ['sorts by code point, not UTF-16', '%EF%BD%81=1&%F0%9D%92%9C=2', 'page', null, '%EF%BD%81=1&%F0%9D%92%9C=2'],
  ['uppercase before lowercase', 'b=1&B=2&a=3', 'page', '2', 'B=2&a=3&b=1&page=2'],
  ['a value holding = is quoted (the query is not plain)', '==x&a=b=c', 'page', '2', '=%3Dx&a=b%3Dc&page=2'],
  // A few pairs are grouped by a scan, more by a Map: repeated names interleaved, in either case.
  ['a few pairs, names repeated out of order', 'b=1&a=2&b=3&page=2&a=4', 'page', '5', 'a=2&a=4&b=1&b=3&page=5'],
  [
    'more than eight pairs, names repeated out of order',
    'z=1&page=9&y=2&z=0&x=3&x=&w=4&v=5&u=6&t=7',
    'page',
    '2',
    'page=2&t=7&u=6&v=5&w=4&x=3&x=&y=2&z=1&z=0',
  ],
];

describe('withParam rebuilds the query as DRF replace_query_param / remove_query_param', () => {
  it.each(WITH_PARAM)('%s', (_, qs, name, value, expected) => {
    expect(withParam(parseQuery(qs), name, value)).toBe(expected);
  });
});

describe("paramPlace: withParam's query cut where the parameter goes (a page's links are written around it)", () => {
  it.each(WITH_PARAM)('%s', (_, qs, name, value, expected) => {
    const { before, after } = paramPlace(parseQuery(qs), name);
    const field = value === null ? '' : `${name}=${quotePlus(value)}`;
    expect([before, field, after].filter(Boolean).join('&')).toBe(expected);
  });
});

describe('#12 a leading U+FEFF in a query name or value is kept, as Python decodes it', () => {
  it.each([
    ['in a name', '%EF%BB%BFpage=2', [['\ufeffpage', '2']]],
    ['in a value', 'page=%EF%BB%BF2', [['page', '\ufeff2']]],
    ['in an ordering', 'ordering=%EF%BB%BFname_en', [['ordering', '\ufeffname_en']]],
    ['two of them', 'a=%EF%BB%BF%EF%BB%BF', [['a', '\ufeff\ufeff']]],
    ['after other text', 'a=x%EF%BB%BF', [['a', 'x\ufeff']]],
  ])('%s', (_, qs, expected) => {
    expect(parseQuery(qs)).toEqual(expected);
  });

  it('links keep it: replace_query_param quotes it back', () => {
    expect(withParam(parseQuery('%EF%BB%BFpage=2&ordering=%EF%BB%BFname_en'), 'page', '2')).toBe(
      'ordering=%EF%BB%BFname_en&page=2&%EF%BB%BFpage=2',
    );
  });
});

describe('plainPairs: the last parsed pairs, when their query needs no decoding, quoting or escaping', () => {
  it.each([
    ['letters, digits, _.-~, one = a field and &', 'page_size=7&page=3&ordering=-name_en.x~', true],
    ['no query', '', true],
    ['a name without =, empty fields', 'a&&b=', true],
    ['an empty name', '=x', true],
    ['a second = (a value holding =, which quote() encodes)', 'a=b=c', false],
    ['an empty name whose value starts with =', '==x', false],
    ['a percent-escape', 'page=%33', false],
    ['a plus', 'q=a+b', false],
    ['a quote (JSON escapes it)', 'q="', false],
    ['a character quote() encodes', 'q=a,b', false],
    ['non-ASCII', 'q=é', false],
  ])('%s', (_, qs, plain) => {
    expect(plainPairs(parseQuery(qs))).toBe(plain);
  });
  it('speaks only of the last pairs parsed, by identity', () => {
    const first = parseQuery('a=1');
    const equal = parseQuery('a=1');
    expect([plainPairs(first), plainPairs(equal)]).toEqual([false, true]);
    expect(plainPairs([['a', '1']])).toBe(false);
  });
});
