import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { makeCity } from './helpers.js';

const index = new CityIndex(
  CityTable.fromCities(
    Array.from({ length: 25 }, (_, i) => makeCity(i + 1, { name: `City ${String(i + 1).padStart(2, '0')}` })),
  ),
  'codepoint',
);
const answer = (qs: string, base = 'http://api.example.com') => {
  const a = answerListing(index, parseQuery(qs), base);
  return {
    status: a.status,
    ...(JSON.parse(Buffer.from(bodyBytes(a.body)).toString()) as {
      next?: string | null;
      previous?: string | null;
      count?: number;
      results?: { id: number }[];
      detail?: string;
    }),
  };
};

describe('answerListing builds links the way DRF does', () => {
  it.each([
    ['first page', '', 'http://api.example.com/cities/?page=2', null],
    [
      'second page drops page from previous',
      'page=2',
      'http://api.example.com/cities/?page=3',
      'http://api.example.com/cities/',
    ],
    ['last page', 'page=3', null, 'http://api.example.com/cities/?page=2'],
    ['page=last gives numbers in links', 'page=last', null, 'http://api.example.com/cities/?page=2'],
    [
      'other parameters kept and sorted',
      'page=2&zeta=1&alpha=2',
      'http://api.example.com/cities/?alpha=2&page=3&zeta=1',
      'http://api.example.com/cities/?alpha=2&zeta=1',
    ],
    [
      'invalid page_size kept as written',
      'page_size=abc&page=2',
      'http://api.example.com/cities/?page=3&page_size=abc',
      'http://api.example.com/cities/?page_size=abc',
    ],
    [
      'encoded values re-encoded with quote_plus',
      'q=%C3%A9+x&page=1',
      'http://api.example.com/cities/?page=2&q=%C3%A9+x',
      null,
    ],
  ])('%s', (_, qs, next, previous) => {
    const a = answer(qs);
    expect([a.next, a.previous]).toEqual([next, previous]);
  });

  it.each([
    ['a quote and a backslash', 'http://h/"a\\b'],
    ['non-ASCII', 'http://h/é'],
    ['U+2028 and U+2029 (escaped, as DRF does)', 'http://h/\u2028\u2029'],
  ])('a base URL with %s is escaped in links and read back as given', (_, base) => {
    const a = answer('page=2', base);
    expect([a.next, a.previous]).toEqual([`${base}/cities/?page=3`, `${base}/cities/`]);
    const raw = Buffer.from(bodyBytes(answerListing(index, parseQuery('page=2'), base).body)).toString();
    expect([raw.includes('\u2028'), raw.includes('\u2029')]).toEqual([false, false]);
  });

  it('sites with other base URLs, answered in turn, each get links on their own base', () => {
    const bases = ['http://a.example', 'http://b.example/x', 'http://a.example'];
    for (const base of [...bases, ...bases]) expect(answer('page=2', base).next).toBe(`${base}/cities/?page=3`);
  });

  it('uses a base URL with a path', () => {
    expect(answer('page=2', 'https://example.org/api/v1').previous).toBe('https://example.org/api/v1/cities/');
  });

  it.each([['page=4'], ['page=0'], ['page=x']])('?%s → 404 Invalid page.', (qs) => {
    expect(answer(qs)).toEqual({ status: 404, detail: 'Invalid page.' });
  });

  it('page_size beyond count gives one page with null links', () => {
    const a = answer('page_size=1000000000000000000000');
    expect([a.count, a.results?.length, a.next, a.previous]).toEqual([25, 25, null, null]);
  });
});
