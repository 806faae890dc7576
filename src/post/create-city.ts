import { codePointLength, hasNullCharacter } from '../core/codepoint.js';
import { MAX_NAME_LENGTH, NAME_FIELDS, type City } from '../core/fields.js';
import { UploadedFile } from './form-body.js';
import { pyFloatRepr } from '../core/json-text.js';
import { parsePyInt, pyStrip } from '../core/python-text.js';
import { COORDINATE_LIMITS, MAX_DECIMALS, MAX_DIGITS } from '../core/validate-record.js';

// Validates a POST body as the reference's ModelSerializer does (CharField(max_length=255),
// DecimalField(max_digits=9, decimal_places=6, allow_null=True), BooleanField), with DRF's
// messages, plus the dataset's own rules (coordinate ranges, both or neither).

export type NewCity = Omit<City, 'id' | 'created_at' | 'updated_at'>;
export type FieldErrors = Record<string, string[]>;

// Python's 1 == 1.0 == True: the int (bigint), the float (number) and the boolean all match.
const TRUE_VALUES = new Set<unknown>([
  't',
  'T',
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'true',
  'True',
  'TRUE',
  'on',
  'On',
  'ON',
  '1',
  1n,
  1,
  true,
]);
const FALSE_VALUES = new Set<unknown>([
  'f',
  'F',
  'n',
  'N',
  'no',
  'No',
  'NO',
  'false',
  'False',
  'FALSE',
  'off',
  'Off',
  'OFF',
  '0',
  0n,
  0,
  false,
]);
const DECIMAL = /^[+-]?(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:[eE]([+-]?\d+))?$/;
const MAX_DECIMAL_STRING = 1000;

/**
 * `data` is the JSON body as Python reads it (parsePyJson: integers as bigint, other numbers as
 * floats), or form fields (the last value of each, files as UploadedFile) when `fromForm`:
 * then, as DRF reads HTML input, an empty `top` is its default. A blank coordinate is null.
 */
export function validateNewCity(data: unknown, fromForm = false): { city: NewCity } | { errors: FieldErrors } {
  if (data === null) return { errors: { non_field_errors: ['No data provided'] } };
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { errors: { non_field_errors: [`Invalid data. Expected a dictionary, but got ${pythonType(data)}.`] } };
  }
  const input = data as Record<string, unknown>;
  const errors: FieldErrors = {};
  const city = { top: false, longitude: null, latitude: null } as unknown as NewCity;
  for (const field of NAME_FIELDS) {
    const result = charField(input[field], field in input);
    if (typeof result === 'string') city[field] = result;
    else errors[field] = result.errors;
  }
  for (const field of ['longitude', 'latitude'] as const) {
    if (!(field in input)) continue;
    const result = decimalField(input[field], COORDINATE_LIMITS[field]);
    if (typeof result === 'object' && result !== null) errors[field] = result.errors;
    else city[field] = result;
  }
  if ('top' in input && !(fromForm && input.top === '')) {
    const top = input.top;
    if (top === null) errors.top = ['This field may not be null.'];
    else if (TRUE_VALUES.has(top)) city.top = true;
    else if (FALSE_VALUES.has(top)) city.top = false;
    else errors.top = ['Must be a valid boolean.'];
  }
  if (Object.keys(errors).length) return { errors };
  if ((city.longitude === null) !== (city.latitude === null)) {
    return { errors: { non_field_errors: ['Give longitude and latitude together, or neither.'] } };
  }
  return { city };
}

function charField(value: unknown, present: boolean): string | { errors: string[] } {
  if (!present) return { errors: ['This field is required.'] };
  if (value === null) return { errors: ['This field may not be null.'] };
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'bigint')
    return { errors: ['Not a valid string.'] };
  const text = pyStrip(pyStr(value));
  if (text === '') return { errors: ['This field may not be blank.'] };
  const errors: string[] = [];
  if (codePointLength(text) > MAX_NAME_LENGTH)
    errors.push(`Ensure this field has no more than ${MAX_NAME_LENGTH} characters.`);
  if (hasNullCharacter(text)) errors.push('Null characters are not allowed.');
  // Looked for only in text that has one (a POST's 16 names were each copied without their pairs).
  const surrogate = text.isWellFormed()
    ? null
    : /[\ud800-\udfff]/u.exec(text.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''));
  if (surrogate)
    errors.push(`Surrogate characters are not allowed: U+${surrogate[0].charCodeAt(0).toString(16).toUpperCase()}.`);
  return errors.length ? { errors } : text;
}

function decimalField(value: unknown, limit: number): number | null | { errors: string[] } {
  if (value === null) return null;
  const fail = (message: string) => ({ errors: [message] });
  // smart_str(value): a file's text is its name; lists, objects and booleans are never numbers.
  const given = value instanceof UploadedFile ? value.name : value;
  if (typeof given !== 'string' && typeof given !== 'number' && typeof given !== 'bigint')
    return fail('A valid number is required.');
  const text = pyStrip(pyStr(given));
  // DRF's DecimalField(allow_null=True) reads a blank value as null, in JSON as in forms.
  if (text === '') return null;
  if (text.length > MAX_DECIMAL_STRING) return fail('String value too large.');
  // Python's Decimal() ignores underscores and reads digits of any script.
  const ascii = text
    .replaceAll('_', '')
    .replace(/[^\x00-\x7f]/gu, (c) => (/\p{Nd}/u.test(c) ? String(parsePyInt(c)) : c));
  const m = DECIMAL.exec(ascii);
  if (!m) return fail('A valid number is required.');
  // Decimal(text).as_tuple(): digits without leading zeros, exponent as written.
  const intPart = m[1] ?? '',
    fracPart = m[2] ?? m[3] ?? '';
  const exponent = Number(m[4] ?? 0) - fracPart.length;
  const digits = (intPart + fracPart).replace(/^0+/, '').length || 1;
  const [total, whole, places] =
    exponent >= 0
      ? [digits + exponent, digits + exponent, 0]
      : digits > -exponent
        ? [digits, digits + exponent, -exponent]
        : [-exponent, 0, -exponent];
  if (total > MAX_DIGITS) return fail(`Ensure that there are no more than ${MAX_DIGITS} digits in total.`);
  if (places > MAX_DECIMALS) return fail(`Ensure that there are no more than ${MAX_DECIMALS} decimal places.`);
  if (whole > MAX_DIGITS - MAX_DECIMALS)
    return fail(`Ensure that there are no more than ${MAX_DIGITS - MAX_DECIMALS} digits before the decimal point.`);
  const number = Number(ascii) + 0;
  if (number > limit) return fail(`Ensure this value is less than or equal to ${limit}.`);
  if (number < -limit) return fail(`Ensure this value is greater than or equal to -${limit}.`);
  return number;
}

/** Python's str() of an int (bigint), a float (number) or a str. */
function pyStr(value: string | number | bigint): string {
  if (typeof value === 'string' || typeof value === 'bigint') return String(value);
  return Number.isFinite(value) ? pyFloatRepr(value) : Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
}

function pythonType(value: unknown): string {
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'float';
  if (Array.isArray(value)) return 'list';
  return typeof value;
}
