import { describe, expect, it } from 'vitest';
import { validateNewCity } from '../src/post/create-city.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { UploadedFile } from '../src/post/form-body.js';

const names = Object.fromEntries(NAME_FIELDS.map((f) => [f, 'Name']));

describe('a POST body is validated as the reference serializer validates it', () => {
  it.each([
    ['names only: defaults for the rest', {}, { top: false, longitude: null, latitude: null }],
    ['coordinates as numbers', { longitude: 12.5, latitude: -7 }, { longitude: 12.5, latitude: -7 }],
    ['coordinates as strings', { longitude: '1e-06', latitude: ' -0.5 ' }, { longitude: 0.000001, latitude: -0.5 }],
    ['null coordinates', { longitude: null, latitude: null }, { longitude: null, latitude: null }],
    ['top as "yes"', { top: 'yes' }, { top: true }],
    ['top as 0', { top: 0n }, { top: false }],
    ['names are stripped', { name_en: '  Oslo \n' }, { name_en: 'Oslo' }],
    ['an int becomes a name with every digit', { name_en: 9007199254740993n }, { name_en: '9007199254740993' }],
    [
      'a float becomes a name as Python writes it',
      { name_en: 1, name_fr: 1e16, name_de: Infinity },
      { name_en: '1.0', name_fr: '1e+16', name_de: 'inf' },
    ],
    ['top as 1.0 (Python: 1.0 == True)', { top: 1 }, { top: true }],
    ['top as -0.0', { top: -0 }, { top: false }],
    [
      'a coordinate with underscores and Arabic-Indic digits, as Decimal() reads it',
      { longitude: '1_2.5', latitude: '\u0661\u0662' },
      { longitude: 12.5, latitude: 12 },
    ],
    ['a coordinate as an int', { longitude: 12n, latitude: -7n }, { longitude: 12, latitude: -7 }],
    ['read-only and unknown fields are ignored', { id: 5, created_at: 'x', population: 3 }, { name_en: 'Name' }],
  ])('%s', (_, extra, expected) => {
    const result = validateNewCity({ ...names, ...extra });
    expect(result).toHaveProperty('city');
    expect((result as { city: object }).city).toMatchObject(expected);
  });

  it.each([
    ['a missing name', { name_en: undefined }, { name_en: ['This field is required.'] }],
    ['a null name', { name_fr: null }, { name_fr: ['This field may not be null.'] }],
    ['a blank name', { name_de: '   ' }, { name_de: ['This field may not be blank.'] }],
    ['a name that is not text', { name_it: ['x'] }, { name_it: ['Not a valid string.'] }],
    ['a boolean name', { name_it: true }, { name_it: ['Not a valid string.'] }],
    [
      'a name too long',
      { name_ru: 'й'.repeat(256) },
      { name_ru: ['Ensure this field has no more than 255 characters.'] },
    ],
    ['a null character', { name_tr: 'a\0b' }, { name_tr: ['Null characters are not allowed.'] }],
    ['a lone surrogate', { name_hi: 'a\ud800' }, { name_hi: ['Surrogate characters are not allowed: U+D800.'] }],
    [
      'a coordinate that is not a number',
      { longitude: 'east', latitude: 1 },
      { longitude: ['A valid number is required.'] },
    ],
    [
      'ten digits',
      { longitude: '1.123456789', latitude: 1 },
      { longitude: ['Ensure that there are no more than 9 digits in total.'] },
    ],
    [
      'seven decimal places',
      { longitude: '0.1234567', latitude: 1 },
      { longitude: ['Ensure that there are no more than 6 decimal places.'] },
    ],
    [
      'four whole digits',
      { longitude: '1000', latitude: 1 },
      { longitude: ['Ensure that there are no more than 3 digits before the decimal point.'] },
    ],
    [
      'longitude over 180',
      { longitude: 180.5, latitude: 1 },
      { longitude: ['Ensure this value is less than or equal to 180.'] },
    ],
    [
      'latitude under -90',
      { longitude: 1, latitude: '-90.5' },
      { latitude: ['Ensure this value is greater than or equal to -90.'] },
    ],
    ['top not a boolean', { top: 'maybe' }, { top: ['Must be a valid boolean.'] }],
    ['top null', { top: null }, { top: ['This field may not be null.'] }],
    [
      'one coordinate only',
      { longitude: 3 },
      { non_field_errors: ['Give longitude and latitude together, or neither.'] },
    ],
  ])('%s', (_, extra, errors) => {
    const body = { ...names, ...extra } as Record<string, unknown>;
    for (const [k, v] of Object.entries(extra)) if (v === undefined) delete body[k];
    expect(validateNewCity(body)).toEqual({ errors });
  });

  it.each([
    ['a list', [], 'Invalid data. Expected a dictionary, but got list.'],
    ['a string', 'x', 'Invalid data. Expected a dictionary, but got str.'],
    ['an int', 3n, 'Invalid data. Expected a dictionary, but got int.'],
    ['a float', 3.5, 'Invalid data. Expected a dictionary, but got float.'],
    ['null', null, 'No data provided'],
  ])('a body that is %s', (_, body, message) => {
    expect(validateNewCity(body)).toEqual({ errors: { non_field_errors: [message] } });
  });

  it('lists every field error, in field order', () => {
    expect(Object.keys((validateNewCity({ top: 'x' }) as { errors: object }).errors)).toEqual([...NAME_FIELDS, 'top']);
  });

  it('an empty coordinate from a form means null', () => {
    expect(validateNewCity({ ...names, longitude: '', latitude: '' }, true)).toMatchObject({
      city: { longitude: null, latitude: null },
    });
  });

  it.each([
    [
      'an empty top from a form is its default (false)',
      { top: '' },
      true,
      { city: expect.objectContaining({ top: false }) },
    ],
    ['an empty top in JSON is not a boolean', { top: '' }, false, { errors: { top: ['Must be a valid boolean.'] } }],
    [
      'a file in a name field is not a string',
      { name_en: new UploadedFile('a.txt') },
      true,
      { errors: { name_en: ['Not a valid string.'] } },
    ],
    [
      'a file in a coordinate is read by its name',
      { longitude: new UploadedFile('12.5'), latitude: '1' },
      true,
      { city: expect.objectContaining({ longitude: 12.5 }) },
    ],
  ])('%s', (_, extra, fromForm, expected) => {
    expect(validateNewCity({ ...names, ...extra }, fromForm)).toEqual(expected);
  });
});
