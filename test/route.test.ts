import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/city-index.js';
import { CityTable } from '../src/city-table.js';
import { negotiate } from '../src/negotiate.js';
import { quotePlus } from '../src/query-string.js';
import { originForm, route, type SiteContext } from '../src/respond.js';
import { makeCity } from './helpers.js';

const site: SiteContext = {
  index: new CityIndex(CityTable.fromCities(Array.from({ length: 23 }, (_, i) => makeCity(i + 1, { name: `N${i % 7}`, top: i % 5 === 0 }))), 'codepoint'),
  baseUrl: 'http://x',
  mount: '',
  layout: { count: 23, pageSizes: [10, 20] },
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
      fc.constantFrom('page', 'page_size', 'ordering', 'format', 'last', 'json', 'api', 'name_en', '-name_ar', '%', '%zz', '%ff', '%C3', '+', '=', '&', ',', '..', '%00', '٣', '9'.repeat(30), ' '),
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

describe('no request changes what the next one gets (negotiation memo keys are injective)', () => {
  /** What route() must answer for ?page=2 with this format and Accept, computed without any memo. */
  const fresh = (format: string | undefined, accept: string | undefined) => {
    const n = negotiate(format, accept);
    return 'status' in n ? n.status : n.renderer === 'json' && n.indent === null ? 'static' : 200;
  };
  const target = (format: string | undefined) => `/cities/?page=2${format === undefined ? '' : `&format=${quotePlus(format)}`}`;
  type Ask = readonly [format: string | undefined, accept: string | undefined];

  it.each<[string, Ask, Ask]>([
    ['format=%00 vs no format', ['\0', 'application/json'], [undefined, 'application/json']],
    ['Accept NUL vs no Accept', [undefined, '\0'], [undefined, undefined]],
    ['both NUL vs neither', ['\0', '\0'], [undefined, undefined]],
    ['a newline moved from format to Accept', ['api\ntext/html', undefined], ['api', 'text/html\n\0']],
    ['format=json vs format=json plus what was the separator', ['json\n', 'text/html'], ['json', '\ntext/html']],
    ['empty format vs no format', ['', 'image/png'], [undefined, 'image/png']],
  ])('%s', (_, first, second) => {
    for (const [a, b] of [[first, second], [second, first]] as const) {
      for (const [format, accept] of [a, b, a, b]) {
        expect(status(target(format), 'GET', accept), `format ${JSON.stringify(format)}, Accept ${JSON.stringify(accept)}`).toBe(fresh(format, accept));
      }
    }
  });

  it('the pairs above do differ, so a shared key would show', () => {
    expect(fresh('\0', 'application/json')).not.toBe(fresh(undefined, 'application/json'));
    expect(fresh(undefined, '\0')).not.toBe(fresh(undefined, undefined));
  });
});
