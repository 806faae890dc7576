import { isCollation } from '../core/collation.js';
import { CitiesApiError, shortText } from '../core/errors.js';
import { PRECOMPUTABLE_ORDERINGS } from '../core/ordering.js';
import { COMPRESSIONS, HOSTS, normalizeBaseUrl } from '../site/spec.js';

// What a library caller's value must be, checked where the package is entered (library-options.ts:
// build()'s and serve()'s options; library-entries.ts: the other exports' arguments), since no type
// checks a call from JavaScript. A kind says what was expected when the value is not it, else
// nothing; the message saying which value it was is made from it (`what`).

/** What a value must be, when it is not that (`a string`), else undefined. */
export type Kind = (value: unknown) => string | undefined;

/** A value as a message names it: short, never a whole object. */
export const what = (value: unknown): string => {
  if (value === undefined || value === null) return 'nothing';
  if (typeof value === 'string') return `the string "${shortText(value, 40)}"`;
  if (Array.isArray(value)) return shortText(JSON.stringify(value) ?? 'an array', 40);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
};

export const string: Kind = (v) => (typeof v === 'string' ? undefined : 'a string');
export const boolean: Kind = (v) => (typeof v === 'boolean' ? undefined : 'true or false');
export const callback: Kind = (v) => (typeof v === 'function' ? undefined : 'a function');
export const signal: Kind = (v) => (v instanceof AbortSignal ? undefined : 'an AbortSignal (AbortController().signal)');
export const whole =
  (expected: string, min: number, max = Number.MAX_SAFE_INTEGER): Kind =>
  (v) =>
    Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max ? undefined : expected;
export const list =
  (item: 'string' | 'number', example: string): Kind =>
  (v) =>
    typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === item || typeof x === 'string'))
      ? undefined
      : `an array such as ${example}, or a comma-separated string`;
export const plainObject: Kind = (v) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? undefined : 'an object';
/** A value of `kind`, or nothing (undefined). */
export const optional =
  (kind: Kind): Kind =>
  (v) =>
    v === undefined ? undefined : kind(v);
/** One of a list of strings. */
export const oneOf =
  (values: readonly string[]): Kind =>
  (v) =>
    typeof v === 'string' && values.includes(v) ? undefined : `one of ${values.join(', ')}`;
/** An absolute http(s) URL, as a site's base URL is (normalizeBaseUrl). */
export const url: Kind = (v) => {
  if (typeof v === 'string')
    try {
      normalizeBaseUrl(v);
      return undefined;
    } catch {}
  return 'an absolute http(s) URL such as https://example.org';
};

/** Whether what was expected names a field of an object already, with the field's value (fieldsOf). */
const named = (expected: string) => expected.includes(' whose `');

/**
 * An object whose every named field is of its kind (others are let be): what is wrong said as the
 * first field that is not, e.g. "a SiteSpec whose `count` is a whole number of cities (not -1)".
 */
export const fieldsOf =
  (type: string, fields: Record<string, Kind>): Kind =>
  (v) => {
    if (plainObject(v)) return type;
    for (const [name, kind] of Object.entries(fields)) {
      const value = (v as Record<string, unknown>)[name];
      const expected = kind(value);
      if (expected) return `${type} whose \`${name}\` is ${expected}${named(expected) ? '' : ` (not ${what(value)})`}`;
    }
    return undefined;
  };

const positive = whole('a whole number, 1 or more', 1);
/** What a site is built with, as its manifest records it (SiteSettings). */
export const SETTINGS_FIELDS: Record<string, Kind> = {
  baseUrl: url,
  collation: (v) => (typeof v === 'string' && isCollation(v) ? undefined : 'locale or codepoint'),
  pageSizes: (v) =>
    Array.isArray(v) && v.every((x) => !positive(x)) ? undefined : 'an array of page sizes, e.g. [10, 20]',
  orderings: (v) =>
    Array.isArray(v) && v.every((x) => PRECOMPUTABLE_ORDERINGS.includes(x))
      ? undefined
      : "an array of orderings, e.g. ['name_en', '-name_ar']",
  defaultPageSize: positive,
  compression: oneOf(COMPRESSIONS),
  liveUrl: (v) => (v === null || v === undefined || !url(v) ? undefined : 'null or an absolute http(s) URL'),
  host: optional(oneOf(HOSTS)),
  firstPages: optional(positive),
  fineBlockBytes: optional(positive),
};
const count = whole('a whole number of cities, 0 or more', 0);
const SPEC_TYPE = 'a SiteSpec (specOf(manifest) of a built site, or siteSpec(settings, count))';
/** A site's spec: its settings, its number of cities and its mount (SiteSpec). */
export const spec: Kind = fieldsOf(SPEC_TYPE, { ...SETTINGS_FIELDS, count, mount: string });
export const settings: Kind = fieldsOf("a SiteSettings (a manifest's `settings`)", SETTINGS_FIELDS);
/** A manifest's head, as specOf() reads it: its settings and its dataset's count. */
export const manifest: Kind = fieldsOf('a Manifest (readManifest(dir))', {
  settings,
  dataset: fieldsOf('an object', { count }),
});
export { count as cityCount };

/**
 * A CitiesApiError saying what is wrong with an argument or option, when `kind` refuses the value
 * (an object's field named by fieldsOf() is said with its own value, the object's is not).
 */
export function refused(name: string, value: unknown, kind: Kind): CitiesApiError | undefined {
  const expected = kind(value);
  if (expected === undefined) return undefined;
  return new CitiesApiError(`${name} must be ${expected}${named(expected) ? '' : `, not ${what(value)}`}`, 2);
}
