import { MAX_NAME_LENGTH, NAME_FIELDS, type NameField } from '../core/fields.js';
import { ROUTES } from '../core/route-table.js';
import { COORDINATE_LIMITS, MAX_DECIMALS } from '../core/validate-record.js';

// The JSON Schemas (2020-12) of openapi.json's components: a city, a page, a new city, the errors, the metadata.

type Json = Record<string, unknown>;

const LANGUAGES: Readonly<Record<NameField, string>> = {
  name_ar: 'Arabic',
  name_en: 'English',
  name_ch: 'Chinese',
  name_fr: 'French',
  name_ur: 'Urdu',
  name_fa: 'Persian',
  name_sp: 'Spanish',
  name_de: 'German',
  name_it: 'Italian',
  name_uk: 'Ukrainian',
  name_hi: 'Hindi',
  name_id: 'Indonesian',
  name_ru: 'Russian',
  name_pt: 'Portuguese',
  name_ms: 'Malay',
  name_tr: 'Turkish',
};
const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z$';
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function nameSchema(field: NameField): Json {
  return { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, description: `Name in ${LANGUAGES[field]}.` };
}

function coordinateSchema(field: keyof typeof COORDINATE_LIMITS): Json {
  const limit = COORDINATE_LIMITS[field];
  return {
    type: ['number', 'null'],
    minimum: -limit,
    maximum: limit,
    description: `Decimal degrees with at most ${MAX_DECIMALS} decimals; null for a city without a location.`,
  };
}

function timestampSchema(description: string): Json {
  return {
    type: 'string',
    format: 'date-time',
    pattern: TIMESTAMP_PATTERN,
    readOnly: true,
    description: `${description} (UTC, always 6 fractional digits and Z).`,
  };
}

export function citySchema(): Json {
  const properties = {
    id: { type: 'integer', readOnly: true, description: 'Unique city identifier.' },
    ...Object.fromEntries(NAME_FIELDS.map((field) => [field, nameSchema(field)])),
    longitude: coordinateSchema('longitude'),
    latitude: coordinateSchema('latitude'),
    top: { type: 'boolean', description: 'A featured city: listed first in the default order.' },
    created_at: timestampSchema('When the city was created'),
    updated_at: timestampSchema('When the city was last changed'),
  };
  return {
    type: 'object',
    description: 'A city; every field is always present.',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

export function cityListSchema(baseUrl: string): Json {
  // Links are absolute, on the base URL, and keep the request's query with `page` changed.
  const link = (description: string) => ({
    type: ['string', 'null'],
    format: 'uri',
    pattern: `^${escapeRegExp(baseUrl)}${escapeRegExp(ROUTES.endpoint)}(\\?.*)?$`,
    description,
  });
  return {
    type: 'object',
    properties: {
      count: { type: 'integer', minimum: 0, description: 'Number of cities across all pages.' },
      next: link('The next page, or null on the last page.'),
      previous: link('The previous page, or null on the first page.'),
      results: { type: 'array', items: ref('City'), description: 'The cities of this page, in the requested order.' },
    },
    required: ['count', 'next', 'previous', 'results'],
    additionalProperties: false,
  };
}

export function newCitySchema(): Json {
  const names = Object.fromEntries(
    NAME_FIELDS.map((field) => [
      field,
      {
        ...nameSchema(field),
        description: `Name in ${LANGUAGES[field]}; leading and trailing whitespace is trimmed, and it must not be blank.`,
      },
    ]),
  );
  const coordinate = (field: keyof typeof COORDINATE_LIMITS) => ({
    ...coordinateSchema(field),
    default: null,
    description: `Decimal degrees with at most ${MAX_DECIMALS} decimals (a number or a numeric string); give longitude and latitude together, or neither.`,
  });
  return {
    type: 'object',
    description: 'A city to create. id, created_at and updated_at are set by the server; unknown fields are ignored.',
    properties: {
      ...names,
      longitude: coordinate('longitude'),
      latitude: coordinate('latitude'),
      top: {
        type: 'boolean',
        default: false,
        description: 'A featured city (also `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`).',
      },
    },
    required: [...NAME_FIELDS],
  };
}

export function errorSchema(): Json {
  return {
    type: 'object',
    properties: { detail: { type: 'string' } },
    required: ['detail'],
    additionalProperties: false,
    examples: [{ detail: 'Invalid page.' }],
  };
}

export function validationErrorsSchema(): Json {
  return {
    type: 'object',
    description: 'Messages per field; `non_field_errors` for the body as a whole.',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    examples: [{ name_en: ['This field is required.'] }],
  };
}

export function metadataSchema(): Json {
  const field = {
    type: 'object',
    properties: {
      type: { type: 'string' },
      required: { type: 'boolean' },
      read_only: { type: 'boolean' },
      label: { type: 'string' },
    },
    required: ['type', 'required', 'read_only', 'label'],
  };
  const strings = { type: 'array', items: { type: 'string' } };
  return {
    type: 'object',
    properties: {
      name: { type: 'string' },
      description: { type: 'string' },
      renders: strings,
      parses: strings,
      actions: { type: 'object', properties: { POST: { type: 'object', additionalProperties: field } } },
    },
    required: ['name', 'description', 'renders', 'parses', 'actions'],
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
