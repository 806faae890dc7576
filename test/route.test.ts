import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { bodyBytes } from '../src/core/page.js';
import { negotiate } from '../src/core/negotiate.js';
import { quotePlus } from '../src/core/query-string.js';
import { listingETag, route } from '../src/http/route.js';
import { answerETag } from '../src/site/answer-tag.js';
import { parseQuery } from '../src/core/query-string.js';
import { JSON_HEADERS, jsonHeadList, jsonHeaders, type SiteContext } from '../src/http/route-types.js';
import { headList } from '../src/http/send-answer.js';
import { originForm } from '../src/core/url-path.js';
import { makeCity, testSpec } from './helpers.js';

const site: SiteContext = {
  index: new CityIndex(
    CityTable.fromCities(
      Array.from({ length: 23 }, (_, i) => makeCity(i + 1, { name: `N${i % 7}`, top: i % 5 === 0 })),
    ),
    'codepoint',
  ),
  spec: testSpec({ baseUrl: 'http://x', count: 23, pageSizes: [10, 20] }),
};
const status = (target: string, method = 'GET', accept?: string) => {
  const r = route({ method, target, accept }, site);
  return r.kind === 'answer' ? r.status : r.kind;
};

describe('route decides every request without I/O', () => {
  it.each([
    ['precomputed page', '/cities/?page=2', 'GET', undefined, 'static'],
    ['live page', '/cities/?page_size=7', 'GET', undefined, 200],
    ['indent asks for a live answer', '/cities/?page=2', 'GET', 'application/json; indent=2', 200],
    ['browsable page', '/cities/?page=2', 'GET', 'text/html', 200],
    ['invalid page', '/cities/?page=9', 'GET', undefined, 404],
    ['unknown format', '/cities/?format=csv', 'GET', undefined, 404],
    ['unmet Accept', '/cities/', 'GET', 'image/png', 406],
    ['POST needs the body', '/cities/', 'POST', undefined, 'create'],
    ['OPTIONS', '/cities/', 'OPTIONS', undefined, 200],
    ['unknown method', '/cities/', 'BREW', undefined, 405],
    ['no trailing slash', '/cities', 'GET', undefined, 301],
    ['percent-encoded path', '/%63ities/', 'GET', undefined, 'static'],
    ['other path', '/cities/1/', 'GET', undefined, 404],
    ['1001 fields', `/cities/?${'&'.repeat(1000)}`, 'GET', undefined, 400],
    ['1000 fields', `/cities/?${'&'.repeat(999)}`, 'GET', undefined, 'static'],
    ['a target of 8 KiB', `/cities/?x=${'a'.repeat(8192 - 11)}`, 'GET', undefined, 200],
    ['a target over 8 KiB', `/cities/?x=${'a'.repeat(8192 - 10)}`, 'GET', undefined, 414],
    ['a long target on another path', `/${'a'.repeat(9000)}`, 'POST', undefined, 414],
  ])('%s', (_, target, method, accept, expected) => {
    expect(status(target, method, accept)).toBe(expected);
  });

  it.each([
    ['a page file, as a failover origin', '/cities/default/20/2.json?page=2&page_size=20', true, 'static'],
    ['a page file for another page size: computed', '/cities/name_en/7/2.json', true, 200],
    ['the all file for another count: computed', '/cities/default/all-11.json', true, 200],
    ['HEAD of a page file', '/cities/default/default/1.json', true, 'static'],
    ['a page file, not a failover origin: 404 as the reference', '/cities/default/default/1.json', false, 404],
    ['a path that is no file key', '/cities/default/x/1.json', true, 404],
    ['the dataset copy', '/_cities-api/cities.json', true, 404],
  ])('%s', (_, target, filePaths, expected) => {
    const r = route({ method: 'GET', target }, site, filePaths);
    expect(r.kind === 'answer' ? r.status : r.kind).toBe(expected);
  });

  it.each([
    ['http://example.org/cities/?page=2', '/cities/?page=2'],
    ['https://example.org:8443/x', '/x'],
    ['http://example.org?page=2', '/?page=2'],
    ['/cities/?next=http://x/y', '/cities/?next=http://x/y'],
    ['//cities/', '//cities/'],
    ['*', '*'],
  ])('the origin form of %s is %s', (target, expected) => {
    expect(originForm(target)).toBe(expected);
  });

  it('any query string gets a deliberate answer, never an exception', () => {
    const part = fc.oneof(
      fc.constantFrom(
        'page',
        'page_size',
        'ordering',
        'format',
        'last',
        'json',
        'api',
        'name_en',
        '-name_ar',
        '%',
        '%zz',
        '%ff',
        '%C3',
        '+',
        '=',
        '&',
        ',',
        '..',
        '%00',
        '٣',
        '9'.repeat(30),
        ' ',
      ),
      fc.string({ maxLength: 6 }),
      fc.string({ unit: 'binary', maxLength: 4 }).map((s) => encodeURIComponent(s.toWellFormed())),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 12 }), fc.constantFrom('GET', 'HEAD', 'OPTIONS'), (parts, method) => {
        const result = status(`/cities/?${parts.join('')}`, method);
        expect([200, 400, 404, 406, 'static']).toContain(result);
      }),
      { numRuns: 3000 },
    );
  });
});

// Found by the DRF oracle (test/oracle.test.ts); each expectation is what the real DRF answers.
describe('answers found different from DRF, now as DRF gives them', () => {
  const live = (target: string, accept?: string) => {
    const r = route({ method: 'GET', target, accept }, site);
    if (r.kind !== 'answer') throw new Error(`${target} was not answered live (${r.kind})`);
    return {
      status: r.status,
      headers: r.headers,
      text: Buffer.from(bodyBytes(r.body instanceof Uint8Array ? [r.body] : r.body)).toString(),
    };
  };
  const ids = (target: string) =>
    (JSON.parse(live(target).text) as { results: { id: number }[] }).results.map((c) => c.id);
  const defaultIds = ids('/cities/?page_size=23&x');

  it.each([
    [
      '#12 a BOM before the ordering field makes it unknown: the default order',
      '/cities/?page_size=23&ordering=%EF%BB%BFname_en',
      defaultIds,
    ],
    [
      '#12 a BOM before the page name makes it another parameter: page 1',
      '/cities/?page_size=5&%EF%BB%BFpage=2',
      defaultIds.slice(0, 5),
    ],
  ])('%s', (_, target, expected) => {
    expect(ids(target)).toEqual(expected);
  });

  it.each([
    ['#12 a BOM before the page number: 404, not a site file', '/cities/?page=%EF%BB%BF2', 404],
    ['#13 U+001F after the page number: int() refuses it', '/cities/?page=1%1F', 404],
    ['#13 U+001C before the page number', '/cities/?page=%1C1', 404],
    ['a no-break space around the page number is skipped by int()', '/cities/?page=%C2%A02%C2%A0', 200],
    [
      'a page size for which Django counts 0 pages: page=last is page 0',
      `/cities/?page_size=${23n << 1075n}&page=last`,
      404,
    ],
    ['that size on page 1: all cities', `/cities/?page_size=${23n << 1075n}&page=1`, 200],
    [
      'a page size of 4301 digits is refused by int(): the default size, page 3 is there',
      `/cities/?page_size=1${'0'.repeat(4300)}&page=3`,
      200,
    ],
  ])('%s', (_, target, expected) => {
    expect(live(target).status).toBe(expected);
  });

  it('#13 a page size behind U+001C is the default 10', () => {
    expect(ids('/cities/?page_size=%1C5')).toEqual(defaultIds.slice(0, 10));
  });

  it('#12 links keep a BOM as the request spelled it', () => {
    const { next } = JSON.parse(live('/cities/?%EF%BB%BFpage=x&ordering=%EF%BB%BFname_en').text) as { next: string };
    expect(next).toBe('http://x/cities/?ordering=%EF%BB%BFname_en&page=2&%EF%BB%BFpage=x');
  });

  it("Django's 404 and 400 pages: text/html without a charset, its template byte for byte (leading newline)", () => {
    for (const [target, title] of [
      ['/cities/1', 'Not Found'],
      [`/cities/?${'&'.repeat(1000)}`, 'Bad Request (400)'],
    ] as const) {
      const answer = live(target);
      expect(answer.headers['Content-Type']).toBe('text/html');
      expect(answer.text.startsWith(`\n<!doctype html>\n<html lang="en">\n<head>\n  <title>${title}</title>`)).toBe(
        true,
      );
    }
  });

  it("the redirect's Location spells the query as Django's iri_to_uri does", () => {
    expect(live('/cities?a={|}&b="<x>"^`\\&c=%41+é').headers.Location).toBe(
      '/cities/?a=%7B%7C%7D&b=%22%3Cx%3E%22%5E%60%5C&c=%41+%C3%A9',
    );
  });
});

describe('no request changes what the next one gets (negotiation memo keys are injective)', () => {
  /** What route() must answer for ?page=2 with this format and Accept, computed without any memo. */
  const fresh = (format: string | undefined, accept: string | undefined) => {
    const n = negotiate(format, accept);
    return 'status' in n ? n.status : n.renderer === 'json' && n.indent === null ? 'static' : 200;
  };
  const target = (format: string | undefined) =>
    `/cities/?page=2${format === undefined ? '' : `&format=${quotePlus(format)}`}`;
  type Ask = readonly [format: string | undefined, accept: string | undefined];

  it.each<[string, Ask, Ask]>([
    ['format=%00 vs no format', ['\0', 'application/json'], [undefined, 'application/json']],
    ['Accept NUL vs no Accept', [undefined, '\0'], [undefined, undefined]],
    ['both NUL vs neither', ['\0', '\0'], [undefined, undefined]],
    ['a newline moved from format to Accept', ['api\ntext/html', undefined], ['api', 'text/html\n\0']],
    ['format=json vs format=json plus what was the separator', ['json\n', 'text/html'], ['json', '\ntext/html']],
    ['empty format vs no format', ['', 'image/png'], [undefined, 'image/png']],
  ])('%s', (_, first, second) => {
    for (const [a, b] of [
      [first, second],
      [second, first],
    ] as const) {
      for (const [format, accept] of [a, b, a, b]) {
        expect(
          status(target(format), 'GET', accept),
          `format ${JSON.stringify(format)}, Accept ${JSON.stringify(accept)}`,
        ).toBe(fresh(format, accept));
      }
    }
  });

  it('the pairs above do differ, so a shared key would show', () => {
    expect(fresh('\0', 'application/json')).not.toBe(fresh(undefined, 'application/json'));
    expect(fresh(undefined, '\0')).not.toBe(fresh(undefined, undefined));
  });
});

// listingETag remembers a decision's ETag (by its pairs): it must stay answerETag's, whatever was asked before.
describe('listingETag: remembered per decision, always what answerETag gives', () => {
  const pairs = parseQuery('page_size=7&page=3');
  const json = negotiate(undefined, undefined);
  const indented = negotiate(undefined, 'application/json; indent=2');
  const specA = testSpec({ baseUrl: 'http://x', count: 23 });
  const specB = testSpec({ baseUrl: 'http://y', count: 23 });
  it.each([
    ['the same decision and site again', json, specA, 't1'],
    ['another data tag', json, specA, 't2'],
    ['another site spec', json, specB, 't2'],
    ['another negotiation (indented)', indented, specB, 't2'],
    ['back to the first', json, specA, 't1'],
  ])('%s', (_name, negotiation, spec, tag) => {
    expect(listingETag({ pairs, negotiation }, { spec, tag })).toBe(answerETag(spec, tag, negotiation, pairs));
    // A decision seen for the first time (not remembered).
    const once = listingETag({ pairs, negotiation }, { spec, tag }, false);
    expect(once).toBe(answerETag(spec, tag, negotiation, pairs));
  });

  it('no tag, no ETag (the site names no data)', () => {
    expect(listingETag({ pairs, negotiation: json }, { spec: specA, tag: undefined })).toBeUndefined();
  });
});

describe("a compact answer's headers: the same as an object and as writeHead's list", () => {
  it.each([
    ['a 200 with its ETag', 'W/"c0123"', 412],
    ['an answer without an ETag (an error)', undefined, 27],
    ['an empty body', undefined, 0],
  ])('%s', (_name, etag, length) => {
    const list = jsonHeadList(etag, length);
    expect(list).toEqual(headList(jsonHeaders(etag), length));
    expect(
      Object.fromEntries(Array.from({ length: list.length / 2 }, (_, i) => [list[2 * i], list[2 * i + 1]])),
    ).toEqual({ ...JSON_HEADERS, ...(etag && { ETag: etag }), 'Content-Length': String(length) });
  });

  it('the list is new each time (a caller may add to it)', () => {
    jsonHeadList('W/"x"', 1).push('X-Extra', '1');
    expect(jsonHeadList(undefined, 1)).toHaveLength(headList(JSON_HEADERS, 1).length);
  });
});
