import { describe, expect, it } from 'vitest';
import { CITY_FIELDS } from '../src/core/fields.js';
import { decimalPlaces, normalizeTimestamp, validateRecord, type RawRecord } from '../src/core/validate-record.js';

const csvRow = (overrides: Record<string, string> = {}): Record<string, string> => ({
  ...Object.fromEntries(CITY_FIELDS.map((f) => [f, f.startsWith('name_') ? 'Name' : ''])),
  id: '1',
  longitude: '12.5',
  latitude: '-7.25',
  top: 'false',
  created_at: '2024-01-01T00:00:00.123456Z',
  updated_at: '2024-01-02T00:00:00Z',
  ...overrides,
});
const jsonRecord = (overrides: Record<string, unknown> = {}): RawRecord => ({
  ...Object.fromEntries(CITY_FIELDS.filter((f) => f.startsWith('name_')).map((f) => [f, 'Name'])),
  id: 1,
  longitude: 12.5,
  latitude: -7.25,
  top: false,
  created_at: '2024-01-01T00:00:00.123456Z',
  updated_at: '2024-01-02T00:00:00Z',
  ...overrides,
});

describe('a valid record becomes a city', () => {
  it.each([
    ['CSV record', csvRow(), true],
    ['JSON record', jsonRecord(), false],
  ])('%s', (_, raw, fromCsv) => {
    const { city } = validateRecord(raw, fromCsv);
    expect(city).toMatchObject({
      id: 1,
      longitude: 12.5,
      latitude: -7.25,
      top: false,
      created_at: '2024-01-01T00:00:00.123456Z',
      updated_at: '2024-01-02T00:00:00.000000Z',
    });
  });

  it.each([
    ['top 1', { top: '1' }, { top: true }],
    ['top 0', { top: '0' }, { top: false }],
    ['top TRUE', { top: 'TRUE' }, { top: true }],
    ['no coordinates', { longitude: '', latitude: '' }, { longitude: null, latitude: null }],
    ['exponent with 6 decimals', { longitude: '1e-06', latitude: '-0.5' }, { longitude: 0.000001, latitude: -0.5 }],
    ['trailing zeros do not count as decimals', { longitude: '12.5000000' }, { longitude: 12.5 }],
    ['+00:00 offset', { created_at: '2024-02-29T23:59:59.5+00:00' }, { created_at: '2024-02-29T23:59:59.500000Z' }],
    ['names kept exactly, spaces included', { name_en: '  Spaced  ' }, { name_en: '  Spaced  ' }],
    ['negative id', { id: '-4' }, { id: -4 }],
  ])('CSV %s', (_, overrides, expected) => {
    expect(validateRecord(csvRow(overrides), true).city).toMatchObject(expected);
  });
});

describe('every invalid value is reported with field, value and reason', () => {
  it.each<[string, Record<string, string>, string, unknown, RegExp]>([
    ['id not an integer', { id: '1.5' }, 'id', '1.5', /must be an integer/],
    ['id empty', { id: '' }, 'id', '', /must be an integer/],
    ['id beyond 2^53', { id: '9007199254740993' }, 'id', '9007199254740993', /must be an integer between/],
    ['empty name', { name_fr: '' }, 'name_fr', '', /must not be empty/],
    ['null character in a name', { name_tr: 'a\0b' }, 'name_tr', 'a\0b', /contains a null character \(U\+0000\)/],
    ['name over 255 characters', { name_de: 'x'.repeat(256) }, 'name_de', 'x'.repeat(256), /longer than 255/],
    ['longitude out of range', { longitude: '180.5' }, 'longitude', '180.5', /between -180 and 180/],
    ['latitude out of range', { latitude: '-90.000001' }, 'latitude', '-90.000001', /between -90 and 90/],
    ['seven decimals', { longitude: '1.1234567' }, 'longitude', '1.1234567', /more than 6 decimal places/],
    ['not a number', { latitude: 'north' }, 'latitude', 'north', /decimal number/],
    ['only one coordinate', { latitude: '' }, 'latitude', '', /both or neither/],
    ['top yes', { top: 'yes' }, 'top', 'yes', /true, false, 1 or 0/],
    [
      'timestamp without zone',
      { created_at: '2024-01-01T00:00:00' },
      'created_at',
      '2024-01-01T00:00:00',
      /ISO 8601 UTC/,
    ],
    [
      'timestamp in another zone',
      { updated_at: '2024-01-01T00:00:00+02:00' },
      'updated_at',
      '2024-01-01T00:00:00+02:00',
      /ISO 8601 UTC/,
    ],
    [
      'seven fractional digits',
      { created_at: '2024-01-01T00:00:00.1234567Z' },
      'created_at',
      '2024-01-01T00:00:00.1234567Z',
      /0-6 fractional/,
    ],
    ['February 30', { created_at: '2023-02-29T00:00:00Z' }, 'created_at', '2023-02-29T00:00:00Z', /ISO 8601/],
  ])('CSV %s', (_, overrides, field, value, reason) => {
    const { problems } = validateRecord(csvRow(overrides), true);
    expect(problems).toEqual([{ field, value, reason: expect.stringMatching(reason) }]);
  });

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ['id as a string', { id: '1' }, 'id', /must be an integer/],
    ['fractional id', { id: 1.5 }, 'id', /must be an integer/],
    ['name not a string', { name_en: 5 }, 'name_en', /must be a string/],
    ['lone surrogate in a name', { name_en: 'a\ud800' }, 'name_en', /unpaired surrogate/],
    ['null character in a name', { name_en: '\0' }, 'name_en', /contains a null character \(U\+0000\)/],
    ['coordinate as text', { longitude: '12.5' }, 'longitude', /number or null/],
    ['seven decimals', { longitude: 1.1234567 }, 'longitude', /more than 6 decimal places/],
    ['top as a string', { top: 'true' }, 'top', /true or false/],
    ['top as 1', { top: 1 }, 'top', /true or false/],
    ['unknown field', { population: 3 }, 'population', /not a city field/],
    ['timestamp as a number', { created_at: 1700000000 }, 'created_at', /ISO 8601/],
  ])('JSON %s', (_, overrides, field, reason) => {
    const { problems } = validateRecord(jsonRecord(overrides), false);
    expect(problems).toEqual([expect.objectContaining({ field, reason: expect.stringMatching(reason) })]);
  });

  it('a missing field is reported as missing', () => {
    const { name_ru: _, ...rest } = jsonRecord();
    expect(validateRecord(rest, false).problems).toEqual([
      { field: 'name_ru', value: undefined, reason: 'is missing' },
    ]);
  });

  it('reports every problem of a record, not just the first', () => {
    expect(validateRecord(csvRow({ id: 'x', name_en: '', top: 'maybe' }), true).problems?.map((p) => p.field)).toEqual([
      'id',
      'name_en',
      'top',
    ]);
  });
});

describe('decimal places and timestamps', () => {
  it.each([
    ['1.50', 1],
    ['1e-06', 6],
    ['1230e-4', 3],
    ['66.0', 0],
    ['0.000001', 6],
    ['100', 0],
    ['-0.5', 1],
    ['1.5e-6', 7],
  ])('decimalPlaces(%s) = %d', (text, n) => {
    expect(decimalPlaces(text)).toBe(n);
  });

  it.each([
    ['2020-10-24T08:00:39.780961Z', '2020-10-24T08:00:39.780961Z'],
    ['2020-10-24T08:00:39Z', '2020-10-24T08:00:39.000000Z'],
    ['2020-10-24T08:00:39.7+00:00', '2020-10-24T08:00:39.700000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000000Z'],
    ['1900-02-29T00:00:00Z', null],
    ['2020-13-01T00:00:00Z', null],
    ['2020-10-24T24:00:00Z', null],
    ['2020-10-24 08:00:39Z', null],
    ['2020-10-24T08:00:60Z', null],
  ])('normalizeTimestamp(%s)', (text, expected) => {
    expect(normalizeTimestamp(text)).toBe(expected);
  });
});
