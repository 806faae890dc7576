import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { compareCodePoints } from '../src/core/codepoint.js';
import fc from 'fast-check';
import { comparatorFor, type Collation } from '../src/core/collation.js';
import { NAME_FIELDS, type City, type NameField } from '../src/core/fields.js';
import { orderingKey, parseOrdering, type Ordering } from '../src/core/ordering.js';
import { makeCity } from './helpers.js';

describe('parseOrdering keeps what DRF OrderingFilter keeps', () => {
  it.each([
    ['absent → default', undefined, 'default'],
    ['empty → default', '', 'default'],
    ['id is not accepted → default', 'id', 'default'],
    ['top is not accepted → default', 'top', 'default'],
    ['unknown field → default', 'bogus', 'default'],
    ['ascending field', 'name_en', 'name_en'],
    ['descending field', '-name_ar', '-name_ar'],
    ['list of fields', 'name_en,-name_ar', 'name_en,-name_ar'],
    ['unaccepted terms dropped from a list', '-id,name_en', 'name_en'],
    ['terms stripped of whitespace', ' name_en , -name_ar ', 'name_en,-name_ar'],
    ['double minus not accepted', '--name_en', 'default'],
    ['a repeated field keeps its first direction', 'name_en,-name_en,name_fr', 'name_en,name_fr'],
    ['case matters', 'NAME_EN', 'default'],
  ])('%s', (_, param, expected) => {
    expect(orderingKey(parseOrdering(param))).toBe(expected);
  });
});

describe('compareCodePoints orders by code point (= UTF-8 bytes), not UTF-16 units', () => {
  it.each([
    ['ASCII', 'a', 'b', -1],
    ['prefix first', 'ab', 'abc', -1],
    ['uppercase before lowercase', 'Z', 'a', -1],
    ['fullwidth (U+FF21) before astral (U+1D49C)', 'Ａ', '𝒜', -1],
    ['private use (U+E000) before astral', '\ue000', '𝒜', -1],
    ['astral after BMP CJK', '𝒜', '東', 1],
    ['equal', 'é', 'é', 0],
  ])('%s', (_, a, b, sign) => {
    expect(Math.sign(compareCodePoints(a, b))).toBe(sign);
  });
});

function orderOf(names: string[], field: NameField, collation: Collation, descending = false): string[] {
  const cities = names.map((name, i) => makeCity(i + 1, { [field]: name }));
  const index = new CityIndex(CityTable.fromCities(cities), collation);
  return [...index.order([{ field, descending }])].map((p) => cities[p]![field]);
}

describe('single-field orderings in both collations', () => {
  it.each<[string, NameField, Collation, string[], string[]]>([
    ['Chinese by pinyin (locale zh)', 'name_ch', 'locale', ['上海', '北京', '广州'], ['北京', '广州', '上海']],
    ['Chinese by code point', 'name_ch', 'codepoint', ['北京', '广州', '上海'], ['上海', '北京', '广州']],
    [
      'Turkish dotted İ after I (locale tr)',
      'name_tr',
      'locale',
      ['İstanbul', 'Izmir', 'Ankara', 'Iğdır'],
      ['Ankara', 'Iğdır', 'Izmir', 'İstanbul'],
    ],
    [
      'Turkish İ by code point after Z',
      'name_tr',
      'codepoint',
      ['İstanbul', 'Zonguldak', 'Ankara'],
      ['Ankara', 'Zonguldak', 'İstanbul'],
    ],
    [
      'Arabic (locale ar)',
      'name_ar',
      'locale',
      ['عمان', 'دبي', 'القاهرة', 'بغداد'],
      ['القاهرة', 'بغداد', 'دبي', 'عمان'],
    ],
    [
      'Spanish ñ after n (locale es)',
      'name_sp',
      'locale',
      ['Oviedo', 'Ñandú', 'Nuevo', 'Ávila'],
      ['Ávila', 'Nuevo', 'Ñandú', 'Oviedo'],
    ],
    [
      'accents next to their letter (locale en)',
      'name_en',
      'locale',
      ['zebra', 'Éclair', 'Eagle'],
      ['Eagle', 'Éclair', 'zebra'],
    ],
    [
      'accents after z by code point',
      'name_en',
      'codepoint',
      ['zebra', 'Éclair', 'Eagle'],
      ['Eagle', 'zebra', 'Éclair'],
    ],
    [
      'fullwidth and astral by code point',
      'name_en',
      'codepoint',
      ['𝒜bc', 'Ａbc', 'abc', 'Abc'],
      ['Abc', 'abc', 'Ａbc', '𝒜bc'],
    ],
    [
      'fullwidth and astral (locale en)',
      'name_en',
      'locale',
      ['𝒜bc', 'Ａbc', 'Abc', 'abc'],
      ['abc', 'Abc', 'Ａbc', '𝒜bc'],
    ],
    ['leading spaces first by code point', 'name_en', 'codepoint', ['b', '  Spaced  ', 'a'], ['  Spaced  ', 'a', 'b']],
  ])('%s', (_, field, collation, names, expected) => {
    expect(orderOf(names, field, collation)).toEqual(expected);
  });
});

describe('ties are broken by id ascending in every direction', () => {
  const cities = [
    makeCity(5, { name: 'Same' }),
    makeCity(2, { name: 'Same' }),
    makeCity(9, { name: 'Other' }),
    makeCity(1, { name: 'Same' }),
  ];
  const ids = (collation: Collation, ordering: Parameters<CityIndex['order']>[0]) =>
    [...new CityIndex(CityTable.fromCities(cities), collation).order(ordering)].map((p) => cities[p]!.id);

  it.each<[string, Collation, Parameters<CityIndex['order']>[0], number[]]>([
    ['ascending', 'codepoint', [{ field: 'name_en', descending: false }], [9, 1, 2, 5]],
    ['descending keeps ties by id ascending', 'codepoint', [{ field: 'name_en', descending: true }], [1, 2, 5, 9]],
    ['locale ascending', 'locale', [{ field: 'name_en', descending: false }], [9, 1, 2, 5]],
    ['locale descending', 'locale', [{ field: 'name_en', descending: true }], [1, 2, 5, 9]],
  ])('%s', (_, collation, ordering, expected) => {
    expect(ids(collation, ordering)).toEqual(expected);
  });

  it('canonically equivalent names tie under locale collation and fall back to id', () => {
    const nfc = [makeCity(3, { name: 'Caf\u00e9' }), makeCity(1, { name: 'Cafe\u0301' })];
    expect(
      [...new CityIndex(CityTable.fromCities(nfc), 'locale').order([{ field: 'name_en', descending: false }])].map(
        (p) => nfc[p]!.id,
      ),
    ).toEqual([1, 3]);
  });
});

describe('default ordering: top cities first, then name_en, then id', () => {
  it.each<[string, Collation]>([
    ['codepoint', 'codepoint'],
    ['locale', 'locale'],
  ])('%s', (_, collation) => {
    const cities = [
      makeCity(1, { name: 'Berlin' }),
      makeCity(2, { name: 'Zagreb', top: true }),
      makeCity(3, { name: 'Athens' }),
      makeCity(4, { name: 'Madrid', top: true }),
      makeCity(5, { name: 'Athens' }),
    ];
    const order = [...new CityIndex(CityTable.fromCities(cities), collation).order([])].map((p) => cities[p]!.id);
    expect(order).toEqual([4, 2, 3, 5, 1]);
  });
});

describe('multi-field orderings compare field by field', () => {
  it('name_en ascending, then name_ar descending, then id', () => {
    const cities = [
      makeCity(1, { name_en: 'A', name_ar: 'ب' }),
      makeCity(2, { name_en: 'A', name_ar: 'ت' }),
      makeCity(3, { name_en: 'B', name_ar: 'ا' }),
      makeCity(4, { name_en: 'A', name_ar: 'ت' }),
    ];
    const index = new CityIndex(CityTable.fromCities(cities), 'codepoint');
    expect([...index.order(parseOrdering('name_en,-name_ar'))].map((p) => cities[p]!.id)).toEqual([2, 4, 1, 3]);
  });
});

/** The reference definition: a comparator over collated names, field by field, then id ascending. */
function comparatorOrder(cities: readonly City[], ordering: Ordering, collation: Collation): number[] {
  const keys = ordering.length
    ? ordering
    : [{ field: 'top' as const }, { field: 'name_en' as const, descending: false }];
  return cities
    .map((c) => c.id)
    .sort((a, b) => {
      const x = cities.find((c) => c.id === a)!,
        y = cities.find((c) => c.id === b)!;
      for (const term of keys) {
        if (term.field === 'top') {
          if (x.top !== y.top) return x.top ? -1 : 1;
          continue;
        }
        const d = comparatorFor(term.field, collation)(x[term.field], y[term.field]);
        if (d) return term.descending ? -d : d;
      }
      return a - b;
    });
}

describe('orders composed from ranks (counting passes) equal a comparator sort', () => {
  // A tiny alphabet makes ties frequent on every field, so each term and the id decide often;
  // 'distinct' fields give every city its own name, where later terms must never matter.
  const tiny = fc.constantFrom('a', 'b', 'B', 'é', 'e\u0301', '東', '');
  const orderingText = fc
    .array(fc.tuple(fc.constantFrom<NameField>('name_en', 'name_ar', 'name_fr', 'name_de', 'name_ch'), fc.boolean()), {
      maxLength: 5,
    })
    .map((terms) => terms.map(([field, descending]) => (descending ? `-${field}` : field)).join(','));
  const dataset = fc
    .uniqueArray(fc.integer({ min: 1, max: 10_000 }), { maxLength: 60 })
    .chain((ids) =>
      fc.tuple(
        ...ids.map((id, i) =>
          fc
            .record({ en: tiny, ar: tiny, fr: tiny, top: fc.boolean() })
            .map((r) => makeCity(id, { name: `d${i}`, name_en: r.en, name_ar: r.ar, name_fr: r.fr, top: r.top })),
        ),
      ),
    );

  it.each<[Collation]>([['codepoint'], ['locale']])(
    '%s collation: every ordering, asked in any sequence (cached or not)',
    (collation) => {
      fc.assert(
        fc.property(dataset, fc.array(orderingText, { minLength: 1, maxLength: 6 }), (cities, texts) => {
          const index = new CityIndex(CityTable.fromCities(cities), collation);
          for (const text of [...texts, ...texts]) {
            const ordering = parseOrdering(text);
            expect(
              [...index.order(ordering)].map((p) => cities[p]!.id),
              text,
            ).toEqual(comparatorOrder(cities, ordering, collation));
          }
        }),
        { numRuns: 300 },
      );
    },
  );

  it.each<[Collation]>([['codepoint'], ['locale']])(
    '%s collation: any page of a new ordering is ordered alone as the whole order would place it',
    (collation) => {
      fc.assert(
        fc.property(dataset, orderingText, fc.nat(70), fc.nat(20), (cities, text, from, length) => {
          const index = new CityIndex(CityTable.fromCities(cities), collation);
          const ordering = parseOrdering(text);
          const [start, end] = [Math.min(from, cities.length), Math.min(from + length, cities.length)];
          expect([...index.positions(ordering, start, end)].map((p) => cities[p]!.id)).toEqual(
            comparatorOrder(cities, ordering, collation).slice(start, end),
          );
        }),
        { numRuns: 500 },
      );
    },
  );

  it('a page inside thousands of ties on the first term is still ordered by the rest', () => {
    const cities = Array.from({ length: 6000 }, (_, i) =>
      makeCity(6000 - i, { name_en: i % 1000 ? 'same' : `u${i}`, name_ar: 'abc'[i % 3], name_fr: `f${i % 7}` }),
    );
    const index = new CityIndex(CityTable.fromCities(cities), 'codepoint');
    const ordering = parseOrdering('name_en,-name_ar,name_fr');
    const expected = comparatorOrder(cities, ordering, 'codepoint');
    for (const [start, end] of [
      [0, 10],
      [2500, 2600],
      [5990, 6000],
    ] as const) {
      expect([...index.positions(ordering, start, end)].map((p) => cities[p]!.id)).toEqual(expected.slice(start, end));
    }
  });

  it.each([
    ['a field named twice keeps its first direction', 'name_en,-name_ar,-name_en', 'name_en,-name_ar'],
    ['terms after an all-distinct field cannot decide', 'name_de,name_en', 'name_de'],
  ])('%s', (_, given, same) => {
    const cities = [3, 1, 4, 5, 9, 2, 6].map((id, i) =>
      makeCity(id, { name_en: 'ab'[i % 2], name_ar: 'xyz'[i % 3], name_de: `d${7 - i}` }),
    );
    const index = new CityIndex(CityTable.fromCities(cities), 'codepoint');
    expect([...index.order(parseOrdering(given))]).toEqual([...index.order(parseOrdering(same))]);
    expect([...index.order(parseOrdering(given))].map((p) => cities[p]!.id)).toEqual(
      comparatorOrder(cities, parseOrdering(same), 'codepoint'),
    );
  });
});

describe('order cache keys are injective', () => {
  it('orderingKey parses back to the same ordering, for every ordering of up to three terms', () => {
    const terms = NAME_FIELDS.flatMap((field) => [
      { field, descending: false },
      { field, descending: true },
    ]);
    const keys = new Set<string>();
    let checked = 0;
    const check = (ordering: Ordering) => {
      const key = orderingKey(ordering);
      expect(parseOrdering(key)).toEqual(ordering);
      keys.add(key);
      checked++;
    };
    check([]);
    for (const a of terms) {
      check([a]);
      for (const b of terms) {
        if (b.field === a.field) continue;
        check([a, b]);
        for (const c of terms.slice(0, 8)) if (c.field !== a.field && c.field !== b.field) check([a, b, c]);
      }
    }
    expect(keys.size).toBe(checked);
  });
});
