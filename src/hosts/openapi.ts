import { VERSION } from '../site/version.js';
import { DEFAULT_PAGE_SIZE } from '../core/paginate.js';
import { ROUTES } from '../core/route-table.js';
import { normalizeBaseUrl, type SiteSpec } from '../site/spec.js';
import {
  cityListSchema,
  citySchema,
  errorSchema,
  metadataSchema,
  newCitySchema,
  validationErrorsSchema,
} from './openapi-schemas.js';
import { createOperation, headOperation, listOperation, optionsOperation, sizesText } from './openapi-operations.js';

// The OpenAPI 3.1 description of the endpoint, written by the build as openapi.json so
// clients can be generated. Schemas are JSON Schema 2020-12, checked against the conformance kit.

const { param, headers: REFERENCE_HEADERS } = ROUTES;

export function openApiDocument(settings: SiteSpec): object {
  // Written only as normalized: a library caller's text may hold what new URL() drops (a line end).
  const baseUrl = normalizeBaseUrl(settings.baseUrl);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cities API',
      version: VERSION,
      description:
        'A paginated, sortable list of cities with names in 16 languages, answered as a Django REST Framework service answers it. ' +
        `Every page of the default order and of each single-field ${param.ordering} is served as a precomputed static file ` +
        `(${DEFAULT_PAGE_SIZE} a page without ${param.pageSize}; ${sizesText(settings)}; any ${param.pageSize} of at least the number of cities); ` +
        'every other query (other page sizes, ordering lists, extra parameters) and POST are answered live by `cities-api serve`. ' +
        'Names are compared in the collation the site was built with: `locale` (an ICU collator of each language) or `codepoint` (Unicode code point order).',
    },
    servers: [{ url: baseUrl }],
    paths: {
      [ROUTES.endpoint]: {
        get: listOperation(settings),
        head: headOperation(),
        post: createOperation(),
        options: optionsOperation(),
      },
    },
    components: {
      schemas: {
        City: citySchema(),
        CityList: cityListSchema(baseUrl),
        NewCity: newCitySchema(),
        Error: errorSchema(),
        ValidationErrors: validationErrorsSchema(),
        Metadata: metadataSchema(),
      },
      headers: {
        Allow: {
          description: 'The methods the endpoint allows.',
          schema: { type: 'string', const: REFERENCE_HEADERS.Allow },
        },
        Vary: {
          description: 'Answers depend on the Accept header.',
          schema: { type: 'string', const: REFERENCE_HEADERS.Vary },
        },
      },
      securitySchemes: {
        tokenAuth: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: '`Token <key>`, the key the server was started with (CITIES_API_TOKEN).',
        },
      },
    },
  };
}
