import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { Collation } from '../src/core/collation.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { singleOrderings } from '../src/core/ordering.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import type { QueryPair } from '../src/core/query-string.js';
import { makeCity } from './helpers.js';

// Names drawn from a small hostile alphabet so that ties, accents, astral and fullwidth
// characters, RTL text and spaces all occur often.
const name = fc
  .array(fc.constantFrom('a', 'B', 'é', 'e\u0301', 'İ', 'ı', 'ع', '東', 'Ａ', '𝒜', ' ', ',', '"'), {
    minLength: 1,
    maxLength: 3,
  })
  .map((a) => a.join(''));
const dataset = fc
  .uniqueArray(fc.integer({ min: -50, max: 500 }), { maxLength: 40 })
  .chain((ids) =>
    fc.tuple(
      ...ids.map((id) =>
        fc
          .record({ en: name, ar: name, other: name, top: fc.boolean() })
          .map((r) => makeCity(id, { name: r.other, name_en: r.en, name_ar: r.ar, top: r.top })),
      ),
    ),
  );

describe('pages partition the dataset in order, for every ordering and page size', () => {
  it.each<[Collation]>([['codepoint'], ['locale']])('%s collation', (collation) => {
    fc.assert(
      fc.property(dataset, fc.integer({ min: 1, max: 12 }), (cities, pageSize) => {
        const index = new CityIndex(CityTable.fromCities(cities), collation);
        for (const ordering of singleOrderings(NAME_FIELDS)) {
          const base: QueryPair[] = ordering.length
            ? [['ordering', `${ordering[0]!.descending ? '-' : ''}${ordering[0]!.field}`]]
            : [];
          const seen: number[] = [];
          let page = 1;
          for (;;) {
            const answer = answerListing(
              index,
              [...base, ['page_size', String(pageSize)], ['page', String(page)]],
              'http://x',
            );
            expect(answer.status).toBe(200);
            const body = JSON.parse(Buffer.from(bodyBytes(answer.body)).toString()) as {
              count: number;
              next: string | null;
              results: { id: number }[];
            };
            expect(body.count).toBe(cities.length);
            expect(body.results.length).toBe(body.next ? pageSize : cities.length - seen.length);
            seen.push(...body.results.map((c) => c.id));
            if (!body.next) break;
            page++;
          }
          expect(
            answerListing(index, [...base, ['page_size', String(pageSize)], ['page', String(page + 1)]], 'http://x')
              .status,
          ).toBe(404);
          expect(new Set(seen).size).toBe(seen.length);
          expect([...seen].sort((a, b) => a - b)).toEqual(cities.map((c) => c.id).sort((a, b) => a - b));
          expect(seen).toEqual([...index.order(ordering)].map((p) => cities[p]!.id));
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('orderings agree with a plain sort', () => {
  it('codepoint: sort by UTF-8 bytes, then id', () => {
    fc.assert(
      fc.property(dataset, fc.constantFrom(...NAME_FIELDS.slice(0, 3)), fc.boolean(), (cities, field, descending) => {
        const index = new CityIndex(CityTable.fromCities(cities), 'codepoint');
        const bytes = (s: string) => Buffer.from(s, 'utf8');
        const expected = [...cities]
          .sort((a, b) => (descending ? -1 : 1) * Buffer.compare(bytes(a[field]), bytes(b[field])) || a.id - b.id)
          .map((c) => c.id);
        expect([...index.order([{ field, descending }])].map((p) => cities[p]!.id)).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  it('default: top first, then name_en by UTF-8 bytes, then id', () => {
    fc.assert(
      fc.property(dataset, (cities) => {
        const index = new CityIndex(CityTable.fromCities(cities), 'codepoint');
        const expected = [...cities]
          .sort(
            (a, b) =>
              Number(b.top) - Number(a.top) ||
              Buffer.compare(Buffer.from(a.name_en), Buffer.from(b.name_en)) ||
              a.id - b.id,
          )
          .map((c) => c.id);
        expect([...index.order([])].map((p) => cities[p]!.id)).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });
});
