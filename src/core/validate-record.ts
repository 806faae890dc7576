import { codePointLength, hasLoneSurrogate, hasNullCharacter } from './codepoint.js';
import { CITY_FIELDS, MAX_NAME_LENGTH, NAME_FIELDS, type City } from './fields.js';

/** A problem with one field of one record (the reader adds file and line). */
export interface FieldProblem {
  field: string;
  value: unknown;
  reason: string;
}

/** The city, or its problems; `id` whenever the record's id itself is valid (to find duplicates either way). */
export type RecordResult =
  | { city: City; id?: number | undefined; problems?: undefined }
  | { city?: undefined; id?: number | undefined; problems: FieldProblem[] };

/** Raw field values of one record: strings from CSV, JSON values from JSON. */
export type RawRecord = Readonly<Record<string, unknown>>;

const CSV_BOOLEANS: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false };
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:Z|\+00:00)$/;
export const COORDINATE_LIMITS = { longitude: 180, latitude: 90 } as const;
export const MAX_DECIMALS = 6;
/** Digits in total of a stored coordinate (3 before the point, 6 after), as a DecimalField(9, 6). */
export const MAX_DIGITS = 9;

export interface ValidateOptions {
  /** Refuse fields that are not city fields (default true); otherwise they are left out of the city. */
  readonly strict?: boolean;
  /** Fields not to report missing (a CSV header without them is reported once, not on every row). */
  readonly absent?: ReadonlySet<string>;
}

export function isCityField(name: string): boolean {
  return (CITY_FIELDS as readonly string[]).includes(name);
}

/** The fields of a record that are not city fields, in its order. */
export function unknownFields(raw: RawRecord): string[] {
  return Object.keys(raw).filter((field) => !isCityField(field));
}

/**
 * Validates one record and builds the city. `fromCsv` reads every value as CSV text
 * (empty coordinates are null; `top` may be true/false/1/0); otherwise values must have
 * their JSON types. Every problem of the record is reported, not just the first.
 */
export function validateRecord(raw: RawRecord, fromCsv: boolean, options: ValidateOptions = {}): RecordResult {
  const problems: FieldProblem[] = [];
  const fail = (field: string, value: unknown, reason: string) => void problems.push({ field, value, reason });
  for (const field of CITY_FIELDS)
    if (!(field in raw) && !options.absent?.has(field)) fail(field, undefined, 'is missing');
  if (options.strict ?? true) for (const field of unknownFields(raw)) fail(field, raw[field], 'is not a city field');
  const city = { id: readId(raw.id, fromCsv, fail) } as City;
  const idValid = 'id' in raw && !problems.some((p) => p.field === 'id');
  for (const field of NAME_FIELDS) if (field in raw) city[field] = readName(field, raw[field], fail);
  const longitude = readCoordinate('longitude', raw.longitude, fromCsv, fail);
  const latitude = readCoordinate('latitude', raw.latitude, fromCsv, fail);
  if (
    'longitude' in raw &&
    'latitude' in raw &&
    longitude !== undefined &&
    latitude !== undefined &&
    (longitude === null) !== (latitude === null)
  ) {
    const missing = longitude === null ? 'longitude' : 'latitude';
    fail(missing, raw[missing], 'must be given together with the other coordinate (both or neither)');
  }
  city.longitude = longitude ?? null;
  city.latitude = latitude ?? null;
  if ('top' in raw) city.top = readTop(raw.top, fromCsv, fail);
  for (const field of ['created_at', 'updated_at'] as const)
    if (field in raw) city[field] = readTimestamp(field, raw[field], fail);
  // No id column (a header problem, told once): no id to compare with the others'.
  const id = idValid ? { id: city.id } : {};
  return problems.length ? { problems, ...id } : { city, ...id };
}

type Fail = (field: string, value: unknown, reason: string) => void;

/** The id a value stands for, or undefined when it is not a valid one. */
export function validId(value: unknown, fromCsv: boolean): number | undefined {
  const id = fromCsv && typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : undefined;
}

function readId(value: unknown, fromCsv: boolean, fail: Fail): number {
  if (value === undefined) return 0;
  const id = validId(value, fromCsv);
  if (id === undefined)
    fail('id', value, `must be an integer between ${-Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`);
  return id ?? 0;
}

function readName(field: string, value: unknown, fail: Fail): string {
  if (typeof value !== 'string') fail(field, value, 'must be a string');
  else if (value === '') fail(field, value, 'must not be empty');
  else if (hasNullCharacter(value))
    fail(field, value, 'contains a null character (U+0000): null characters are not allowed (a POST refuses them too)');
  else if (hasLoneSurrogate(value)) fail(field, value, 'contains an unpaired surrogate (not valid Unicode text)');
  else if (codePointLength(value) > MAX_NAME_LENGTH) fail(field, value, `is longer than ${MAX_NAME_LENGTH} characters`);
  else return value;
  return '';
}

/** The coordinate, null when absent, undefined when invalid (the problem is reported). */
function readCoordinate(
  field: keyof typeof COORDINATE_LIMITS,
  value: unknown,
  fromCsv: boolean,
  fail: Fail,
): number | null | undefined {
  if (value === undefined || value === null || (fromCsv && value === '')) return null;
  let text: string;
  if (typeof value === 'number' && !fromCsv) text = value.toExponential();
  else if (typeof value === 'string' && fromCsv) text = value;
  else {
    fail(field, value, fromCsv ? 'must be a decimal number or empty' : 'must be a number or null');
    return undefined;
  }
  const limit = COORDINATE_LIMITS[field];
  if (!DECIMAL.test(text)) fail(field, value, 'must be a decimal number (e.g. -0.1275) or empty');
  else if (decimalPlaces(text) > MAX_DECIMALS) fail(field, value, `has more than ${MAX_DECIMALS} decimal places`);
  else if (Math.abs(Number(text)) > limit) fail(field, value, `must be between -${limit} and ${limit}`);
  else return Number(text) + 0;
  return undefined;
}

/** Decimal places a number really needs: `1.50` has 1, `1e-06` has 6, `1230e-4` has 3. */
export function decimalPlaces(text: string): number {
  const match = /^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return Infinity;
  const digits = (match[1] ?? '') + (match[2] ?? '');
  const exponent = Number(match[3] ?? 0) - (match[2] ?? '').length;
  const significant = digits.replace(/0+$/, '');
  if (!/[1-9]/.test(significant)) return 0;
  return Math.max(0, -(exponent + (digits.length - significant.length)));
}

function readTop(value: unknown, fromCsv: boolean, fail: Fail): boolean {
  if (typeof value === 'boolean' && !fromCsv) return value;
  if (typeof value === 'string' && fromCsv) {
    const top = CSV_BOOLEANS[value.toLowerCase()];
    if (top !== undefined) return top;
  }
  fail('top', value, fromCsv ? 'must be true, false, 1 or 0' : 'must be true or false');
  return false;
}

function readTimestamp(field: string, value: unknown, fail: Fail): string {
  const normalized = typeof value === 'string' ? normalizeTimestamp(value) : null;
  if (normalized === null) {
    fail(
      field,
      value,
      'must be an ISO 8601 UTC timestamp such as 2024-01-31T09:30:00.123456Z (Z or +00:00, 0-6 fractional digits)',
    );
    return '';
  }
  return normalized;
}

/** `YYYY-MM-DDTHH:MM:SS[.f{1,6}](Z|+00:00)` as `YYYY-MM-DDTHH:MM:SS.ffffffZ`, or null when not a real UTC instant. */
export function normalizeTimestamp(text: string): string | null {
  const m = TIMESTAMP.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = ''] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (year < 1 || days === undefined || day < 1 || day > days || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59)
    return null;
  return `${y}-${mo}-${d}T${h}:${mi}:${s}.${frac.padEnd(6, '0')}Z`;
}
