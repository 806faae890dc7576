import { describe, expect, it } from 'vitest';
import { CityIndex } from '../src/city-index.js';
import { CityTable } from '../src/city-table.js';
import { compareCodePoints } from '../src/codepoint.js';
import type { Collation } from '../src/collation.js';
import type { NameField } from '../src/fields.js';
import { orderingKey, parseOrdering } from '../src/ordering.js';
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
    ['Turkish dotted İ after I (locale tr)', 'name_tr', 'locale', ['İstanbul', 'Izmir', 'Ankara', 'Iğdır'], ['Ankara', 'Iğdır', 'Izmir', 'İstanbul']],
    ['Turkish İ by code point after Z', 'name_tr', 'codepoint', ['İstanbul', 'Zonguldak', 'Ankara'], ['Ankara', 'Zonguldak', 'İstanbul']],
    ['Arabic (locale ar)', 'name_ar', 'locale', ['عمان', 'دبي', 'القاهرة', 'بغداد'], ['القاهرة', 'بغداد', 'دبي', 'عمان']],
    ['Spanish ñ after n (locale es)', 'name_sp', 'locale', ['Oviedo', 'Ñandú', 'Nuevo', 'Ávila'], ['Ávila', 'Nuevo', 'Ñandú', 'Oviedo']],
    ['accents next to their letter (locale en)', 'name_en', 'locale', ['zebra', 'Éclair', 'Eagle'], ['Eagle', 'Éclair', 'zebra']],
    ['accents after z by code point', 'name_en', 'codepoint', ['zebra', 'Éclair', 'Eagle'], ['Eagle', 'zebra', 'Éclair']],
    ['fullwidth and astral by code point', 'name_en', 'codepoint', ['𝒜bc', 'Ａbc', 'abc', 'Abc'], ['Abc', 'abc', 'Ａbc', '𝒜bc']],
    ['fullwidth and astral (locale en)', 'name_en', 'locale', ['𝒜bc', 'Ａbc', 'Abc', 'abc'], ['abc', 'Abc', 'Ａbc', '𝒜bc']],
    ['leading spaces first by code point', 'name_en', 'codepoint', ['b', '  Spaced  ', 'a'], ['  Spaced  ', 'a', 'b']],
  ])('%s', (_, field, collation, names, expected) => {
    expect(orderOf(names, field, collation)).toEqual(expected);
  });
});

describe('ties are broken by id ascending in every direction', () => {
  const cities = [makeCity(5, { name: 'Same' }), makeCity(2, { name: 'Same' }), makeCity(9, { name: 'Other' }), makeCity(1, { name: 'Same' })];
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
    expect([...new CityIndex(CityTable.fromCities(nfc), 'locale').order([{ field: 'name_en', descending: false }])].map((p) => nfc[p]!.id)).toEqual([1, 3]);
  });
});

describe('default ordering: top cities first, then name_en, then id', () => {
  it.each<[string, Collation]>([['codepoint', 'codepoint'], ['locale', 'locale']])('%s', (_, collation) => {
    const cities = [
      makeCity(1, { name: 'Berlin' }), makeCity(2, { name: 'Zagreb', top: true }), makeCity(3, { name: 'Athens' }),
      makeCity(4, { name: 'Madrid', top: true }), makeCity(5, { name: 'Athens' }),
    ];
    const order = [...new CityIndex(CityTable.fromCities(cities), collation).order([])].map((p) => cities[p]!.id);
    expect(order).toEqual([4, 2, 3, 5, 1]);
  });
});

describe('multi-field orderings compare field by field', () => {
  it('name_en ascending, then name_ar descending, then id', () => {
    const cities = [
      makeCity(1, { name_en: 'A', name_ar: 'ب' }), makeCity(2, { name_en: 'A', name_ar: 'ت' }),
      makeCity(3, { name_en: 'B', name_ar: 'ا' }), makeCity(4, { name_en: 'A', name_ar: 'ت' }),
    ];
    const index = new CityIndex(CityTable.fromCities(cities), 'codepoint');
    expect([...index.order(parseOrdering('name_en,-name_ar'))].map((p) => cities[p]!.id)).toEqual([2, 4, 1, 3]);
  });
});
