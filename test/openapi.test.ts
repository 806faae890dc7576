import { compileErrors, validate } from '@readme/openapi-parser';
// ajv is not a dependency of ours: it comes with @readme/openapi-parser (a devDependency), which
// validates OpenAPI documents with it. Ajv2020 speaks the JSON Schema dialect of OpenAPI 3.1.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { CITY_FIELDS, NAME_FIELDS } from '../src/core/fields.js';
import { optionsMetadata } from '../src/core/metadata.js';
import { openApiDocument } from '../src/hosts/openapi.js';
import { KIT_DATASETS, kitAnswers, makeCity, testSpec } from './helpers.js';

interface Operation {
  operationId: string;
  parameters?: Record<string, unknown>[];
  security?: unknown;
  responses: Record<string, unknown>;
}
interface Document {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { required?: string[]; properties?: object }>;
    securitySchemes: Record<string, unknown>;
  };
}

const settings = (baseUrl: string, pageSizes: number[] = [10, 20, 50, 100]) => testSpec({ baseUrl, pageSizes });
const documentFor = (baseUrl: string, pageSizes?: number[]) =>
  openApiDocument(settings(baseUrl, pageSizes)) as Document;
/** The document as the validator's input type (it validates at run time what it cannot know statically). */
const asInput = (document: object) => structuredClone(document) as Parameters<typeof validate>[0];

/** Compiles the document's component schemas; `check(name, value)` lists the errors of value against one. */
function schemaChecker(document: Document) {
  // strict mode: an unknown keyword or a typo in a schema fails compilation instead of being ignored.
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('uri', (text: string) => URL.canParse(text));
  ajv.addFormat('date-time', (text: string) => !Number.isNaN(Date.parse(text)));
  ajv.addKeyword('components'); // the wrapper that makes `#/components/schemas/...` refs resolve
  ajv.addSchema({ $id: 'openapi.json', components: document.components }, 'openapi.json');
  return (name: string, value: unknown): string[] => {
    const check = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
    if (!check) throw new Error(`no schema ${name}`);
    return check(value) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  };
}

describe('openApiDocument', () => {
  it.each(['http://localhost:8080', 'https://example.org/api/v1', 'https://cities.example.org/api/v1'])(
    'is a valid OpenAPI 3.1 document for base URL %s',
    async (baseUrl) => {
      const result = await validate(asInput(documentFor(baseUrl)));
      expect(result.valid, compileErrors(result)).toBe(true);
      expect(result.warnings).toEqual([]);
      expect(result.specification).toBe('OpenAPI');
    },
  );

  it('is rejected by the validator when broken, so the check above can fail', async () => {
    const broken = structuredClone(documentFor('http://localhost:8080'));
    broken.paths['/cities/']!.post!.responses = { '201': { content: {} } }; // a response without description
    broken.paths['/cities/']!.options!.operationId = 'listCities'; // a duplicate operationId
    const result = await validate(asInput(broken));
    expect(result.valid).toBe(false);
    expect(compileErrors(result)).toMatch(/description/);
  });

  it('is deterministic: same settings, same JSON', () => {
    const a = JSON.stringify(documentFor('https://example.org/api/v1', [20, 50]));
    expect(JSON.stringify(documentFor('https://example.org/api/v1', [20, 50]))).toBe(a);
    expect(JSON.stringify(documentFor('https://example.org/api/v2', [20, 50]))).not.toBe(a);
  });

  const doc = documentFor('https://example.org/api/v1', [25, 200]);
  const operations = doc.paths['/cities/']!;
  it.each([
    ['server URL is the base URL', doc.servers, [{ url: 'https://example.org/api/v1' }]],
    ['openapi version', doc.openapi, '3.1.0'],
    ['paths', Object.keys(doc.paths), ['/cities/']],
    ['GET operationId', operations.get?.operationId, 'listCities'],
    ['POST operationId', operations.post?.operationId, 'createCity'],
    [
      'methods described',
      ['get', 'head', 'post', 'options'].filter((m) => m in operations),
      ['get', 'head', 'post', 'options'],
    ],
    ['GET parameters', operations.get?.parameters?.map((p) => p.name), ['ordering', 'page', 'page_size', 'format']],
    ['POST security', operations.post?.security, [{ tokenAuth: [] }]],
    [
      'token scheme',
      doc.components.securitySchemes.tokenAuth,
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Authorization' }),
    ],
    ['NewCity requires the 16 names', doc.components.schemas.NewCity!.required, [...NAME_FIELDS]],
    ['City fields in the spec order', Object.keys(doc.components.schemas.City!.properties!), [...CITY_FIELDS]],
    ['City requires every field', doc.components.schemas.City!.required, [...CITY_FIELDS]],
    ['precomputed page sizes', operations.get?.parameters?.[2]?.['x-precomputed-page-sizes'], [25, 200]],
    ['POST statuses', Object.keys(operations.post?.responses ?? {}), ['201', '400', '401', '403', '413', '415']],
  ])('%s', (_label, actual, expected) => {
    expect(actual).toEqual(expected);
  });
});

describe('the schemas describe the real answers', () => {
  it.each(KIT_DATASETS)(
    'every core GET body of $name matches CityList (200) or Error (404)',
    async ({ name, baseUrl }) => {
      const check = schemaChecker(documentFor(baseUrl));
      const bodies = (await kitAnswers(name)).filter((a) => a.level === 'core' && a.method === 'GET');
      expect(bodies.length).toBeGreaterThan(60);
      for (const answer of bodies) {
        expect([200, 404], answer.target).toContain(answer.status);
        expect(
          check(answer.status === 200 ? 'CityList' : 'Error', answer.json),
          `${answer.status} ${answer.target}`,
        ).toEqual([]);
      }
    },
  );

  it.each(KIT_DATASETS)('the OPTIONS body of $name and ours match Metadata', async ({ name, baseUrl }) => {
    const check = schemaChecker(documentFor(baseUrl));
    const metadata = (await kitAnswers(name)).filter((a) => a.level === 'metadata');
    expect(metadata).toHaveLength(1);
    expect(check('Metadata', metadata[0]!.json)).toEqual([]);
    expect(check('Metadata', optionsMetadata())).toEqual([]);
  });

  const check = schemaChecker(documentFor('http://api.example.com'));
  const page = (overrides: object) => ({ count: 1, next: null, previous: null, results: [makeCity(1)], ...overrides });
  it.each([
    ['a link on another host', page({ next: 'http://elsewhere.example.com/cities/?page=2' }), /pattern/],
    ['a link that is not a URI', page({ previous: 'cities/?page=1' }), /pattern|format/],
    ['a city without top', page({ results: [{ ...makeCity(1), top: undefined }] }), /required property 'top'/],
    ['a city with an extra field', page({ results: [{ ...makeCity(1), extra: 1 }] }), /additional properties/],
    [
      'a timestamp without microseconds',
      page({ results: [makeCity(1, { created_at: '2024-01-01T00:00:00Z' })] }),
      /pattern/,
    ],
    ['a longitude out of range', page({ results: [makeCity(1, { longitude: 180.5 })] }), /<= 180/],
    ['a name too long', page({ results: [makeCity(1, { name_fr: 'x'.repeat(256) })] }), /more than 255/],
  ])('CityList rejects %s', (_label, body, message) => {
    expect(check('CityList', JSON.parse(JSON.stringify(body))).join('\n')).toMatch(message);
  });

  it.each([
    [
      { ...Object.fromEntries(NAME_FIELDS.map((f) => [f, 'Oslo'])), longitude: 10.75, latitude: 59.91, top: true },
      true,
    ],
    [Object.fromEntries(NAME_FIELDS.map((f) => [f, 'Oslo'])), true],
    [Object.fromEntries(NAME_FIELDS.slice(1).map((f) => [f, 'Oslo'])), false],
    [{ ...Object.fromEntries(NAME_FIELDS.map((f) => [f, 'Oslo'])), latitude: -90.5 }, false],
  ])('NewCity %#', (body, valid) => {
    expect(check('NewCity', body)).toHaveLength(valid ? 0 : 1);
  });

  it('ValidationErrors and Error tell per-field lists from a detail', () => {
    expect(check('ValidationErrors', { name_en: ['This field is required.'] })).toEqual([]);
    expect(check('ValidationErrors', { detail: 'JSON parse error' })).not.toEqual([]);
    expect(check('Error', { detail: 'Invalid page.' })).toEqual([]);
    expect(check('Error', { detail: ['Invalid page.'] })).not.toEqual([]);
  });
});
