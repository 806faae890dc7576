import { NAME_FIELDS } from '../core/fields.js';
import { DEFAULT_PAGE_SIZE } from '../core/paginate.js';
import { ROUTES } from '../core/route-table.js';
import type { SiteSpec } from '../site/spec.js';

// openapi.json's operations on the endpoint (GET with its query parameters, HEAD, POST, OPTIONS)
// and the answers each gives, referring to the schemas of openapi-schemas.ts by name.

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json, extra: Json = {}) => ({ [ROUTES.mediaType.json]: { schema, ...extra } });
const { param, limits } = ROUTES;
const API_HEADERS = { Allow: { $ref: '#/components/headers/Allow' }, Vary: { $ref: '#/components/headers/Vary' } };

function listParameters(settings: SiteSpec): Json[] {
  const query = (name: string, description: string, schema: Json, extra: Json = {}) => ({
    name,
    in: 'query',
    required: false,
    description,
    schema,
    ...extra,
  });
  return [
    query(
      param.ordering,
      `Comma-separated sort fields, each one of ${NAME_FIELDS.join(', ')}, ascending, or prefixed with \`${ROUTES.descending}\` for descending. ` +
        'Other field names (id, top, unknown ones) are ignored; without any valid field the default order applies: top cities first, then name_en ascending. ' +
        'Ties are always broken by id ascending, so no city appears on two pages.',
      { type: 'string' },
      {
        examples: {
          ascending: { value: 'name_en' },
          descending: { value: '-name_ar' },
          list: { value: 'name_en,-name_ar' },
        },
      },
    ),
    query(
      param.page,
      `1-based page number, or \`${ROUTES.lastPage}\`. A page out of range, or anything else, is 404 \`Invalid page.\`.`,
      {
        oneOf: [
          { type: 'integer', minimum: 1 },
          { type: 'string', const: ROUTES.lastPage },
        ],
        default: 1,
      },
    ),
    query(
      param.pageSize,
      `Cities per page: any positive integer; an invalid value means the default (${DEFAULT_PAGE_SIZE}). ` +
        'A size of at least `count` gives one page with `next` and `previous` null. ' +
        `Static pages are precomputed without ${param.pageSize} and for ${sizesText(settings)}; other sizes are computed live.`,
      { type: 'integer', minimum: 1, default: DEFAULT_PAGE_SIZE },
      { 'x-precomputed-page-sizes': [...settings.pageSizes] },
    ),
    query(
      param.format,
      `\`${ROUTES.format.json}\`, or \`${ROUTES.format.html}\` for the browsable HTML page; any other value is 404 \`Not found.\`.`,
      { type: 'string', enum: [ROUTES.format.json, ROUTES.format.html] },
    ),
  ];
}

export function listOperation(settings: SiteSpec): Json {
  return {
    operationId: 'listCities',
    summary: 'List cities, one page at a time',
    parameters: listParameters(settings),
    responses: {
      '200': {
        description: `A page of cities (HTML when \`${ROUTES.param.format}=${ROUTES.format.html}\` or a browser asks for ${ROUTES.mediaType.html}).`,
        headers: API_HEADERS,
        content: { ...json(ref('CityList')), [ROUTES.mediaType.html]: { schema: { type: 'string' } } },
      },
      '404': {
        description:
          `\`Invalid page.\` for a page that is not a positive integer, \`${ROUTES.lastPage}\` or in range; \`Not found.\` for an unknown format. ` +
          'A static-only host answers a query it has no file for with a `Not precomputed: ...` detail.',
        content: json(ref('Error'), {
          examples: {
            invalidPage: { value: { detail: 'Invalid page.' } },
            unknownFormat: { value: { detail: 'Not found.' } },
          },
        }),
      },
      '406': errorResponse(`The Accept header asks for neither ${ROUTES.mediaType.json} nor ${ROUTES.mediaType.html}.`),
    },
  };
}

export function headOperation(): Json {
  return {
    operationId: 'headCities',
    summary: 'As GET, without a body',
    responses: {
      '200': { description: 'The headers GET would send.', headers: API_HEADERS },
      '404': { description: 'GET would answer 404.' },
    },
  };
}

export function createOperation(): Json {
  const body = { schema: ref('NewCity') };
  return {
    operationId: 'createCity',
    summary: 'Create a city (only on a server started with --writable)',
    security: [{ tokenAuth: [] }],
    requestBody: {
      required: true,
      description: `At most ${limits.bodyBytes} bytes.`,
      content: { [ROUTES.mediaType.json]: body, [ROUTES.mediaType.form]: body, [ROUTES.mediaType.multipart]: body },
    },
    responses: {
      '201': {
        description: 'The city as stored: id is the highest id plus one, both timestamps are now.',
        headers: API_HEADERS,
        content: json(ref('City')),
      },
      '400': {
        description: 'Invalid fields (a list of messages per field), or a body that cannot be parsed (`detail`).',
        content: json({ oneOf: [ref('ValidationErrors'), ref('Error')] }),
      },
      '401': {
        ...errorResponse('No or wrong `Authorization: Token <key>` header.'),
        headers: { [ROUTES.header.authenticate]: { schema: { type: 'string', const: 'Token' } } },
      },
      '403': errorResponse('The server is read-only (not started with --writable and CITIES_API_TOKEN).'),
      '413': errorResponse(`The body is larger than ${limits.bodyBytes} bytes.`),
      '415': errorResponse('The body is not JSON, a URL-encoded form or multipart form data.'),
    },
  };
}

export function optionsOperation(): Json {
  return {
    operationId: 'describeCities',
    summary: 'Describe the endpoint and the fields POST accepts (also answers CORS preflights)',
    responses: { '200': { description: 'DRF metadata of the endpoint.', content: json(ref('Metadata')) } },
  };
}

function errorResponse(description: string): Json {
  return { description, content: json(ref('Error')) };
}

/** The page sizes precomputed besides the default, as the descriptions say them. */
export function sizesText(settings: SiteSpec): string {
  return settings.pageSizes.length
    ? `${param.pageSize} ${settings.pageSizes.join(', ')}`
    : `no other ${param.pageSize}`;
}
