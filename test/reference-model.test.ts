import { ROUTES } from '../src/core/route-table.js';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { Collation } from '../src/core/collation.js';
import type { City } from '../src/core/fields.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery, type QueryPair } from '../src/core/query-string.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { staticPathFor } from '../src/site/layout.js';
import { KIT, KIT_DATASETS, kitAnswers, tempDir } from './helpers.js';

// The listing checked against a plain reference model of DRF + Django's paginator, written here
// from the spec and the conformance kit's README (not from src/): random datasets of hostile text,
// random (often malformed) queries. Then: a real build writes what the live function answers;
// following `next` visits every city once; a dataset written to CSV or JSON reads back as given.

// ---------------------------------------------------------------- the spec's record, hostile data

/** The 22 fields in the spec's order (section 2). */
const SPEC_FIELDS = [
  'id',
  'name_ar',
  'name_en',
  'name_ch',
  'name_fr',
  'name_ur',
  'name_fa',
  'name_sp',
  'name_de',
  'name_it',
  'name_uk',
  'name_hi',
  'name_id',
  'name_ru',
  'name_pt',
  'name_ms',
  'name_tr',
  'longitude',
  'latitude',
  'top',
  'created_at',
  'updated_at',
] as const;
type Name = (typeof SPEC_FIELDS)[number] & `name_${string}`;
const NAMES = SPEC_FIELDS.filter((f): f is Name => f.startsWith('name_'));
/** The ICU language of each field in `locale` collation (README: `es` for name_sp, `zh` for name_ch). */
const LANGUAGE: Record<Name, string> = {
  name_ar: 'ar',
  name_en: 'en',
  name_ch: 'zh',
  name_fr: 'fr',
  name_ur: 'ur',
  name_fa: 'fa',
  name_sp: 'es',
  name_de: 'de',
  name_it: 'it',
  name_uk: 'uk',
  name_hi: 'hi',
  name_id: 'id',
  name_ru: 'ru',
  name_pt: 'pt',
  name_ms: 'ms',
  name_tr: 'tr',
};

/** Pieces of hostile text: CSV and JSON specials, RTL, astral, emoji, fullwidth, combining marks, Turkish i's, spaces. */
const PIECES = [
  'a',
  'B',
  'z',
  'I',
  'i',
  'İ',
  'ı',
  'é',
  'e\u0301',
  'Ａ',
  'A',
  '𝒜',
  '😀',
  '👍🏽',
  'ß',
  '東京',
  'القاهرة',
  'תל אביב',
  ' ',
  '  ',
  '\t',
  '\u00a0',
  '"',
  "'",
  ',',
  ';',
  '\\',
  '\n',
  '\r',
  '\r\n',
  '\u2028',
];
/** Whole names that recur across cities (ties, near-ties, leading/trailing spaces). */
const COMMON_NAMES = [
  'Paris',
  ' Paris',
  'Paris ',
  'paris',
  'İstanbul',
  'istanbul',
  'Istanbul',
  'Ａlpha',
  'Alpha',
  'é',
  'e\u0301',
  '"Q", R',
  'مدينة',
  'עיר',
];
const nameArb = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('')),
  fc.constantFrom(...COMMON_NAMES),
);

/** A coordinate as written in the file (up to 6 decimals, trailing zeros optional) and its value. */
const coordinateArb = (limit: number) =>
  fc.tuple(fc.integer({ min: -limit * 1e6, max: limit * 1e6 }), fc.boolean()).map(([micro, trim]) => {
    const digits = String(Math.abs(micro)).padStart(7, '0');
    let text = `${micro < 0 ? '-' : ''}${digits.slice(0, -6)}.${digits.slice(-6)}`;
    if (trim) text = text.replace(/\.?0+$/, '');
    return text;
  });

/** A UTC timestamp in one of the accepted spellings, and how it is served. */
const timestampArb = fc
  .record({
    date: fc.date({
      min: new Date('1970-01-01T00:00:00Z'),
      max: new Date('2099-12-31T23:59:59Z'),
      noInvalidDate: true,
    }),
    fraction: fc.stringMatching(/^[0-9]{0,6}$/),
    zone: fc.constantFrom('Z', '+00:00'),
  })
  .map(({ date, fraction, zone }) => {
    const seconds = date.toISOString().slice(0, 19);
    return {
      text: `${seconds}${fraction ? `.${fraction}` : ''}${zone}`,
      served: `${seconds}.${fraction.padEnd(6, '0')}Z`,
    };
  });

interface CitySpec {
  /** What the API must serve. */
  readonly city: City;
  /** The values as a CSV file spells them. */
  readonly csv: Readonly<Record<string, string>>;
  /** The record as a JSON file holds it. */
  readonly json: Readonly<Record<string, unknown>>;
}

const citySpecArb = (id: number) =>
  fc
    .record({
      names: fc.tuple(...NAMES.map(() => nameArb)),
      place: fc.option(fc.tuple(coordinateArb(180), coordinateArb(90)), { freq: 4 }),
      top: fc.constantFrom<[string, boolean]>(
        ['true', true],
        ['false', false],
        ['1', true],
        ['0', false],
        ['True', true],
        ['FALSE', false],
      ),
      created: timestampArb,
      updated: timestampArb,
    })
    .map(({ names, place, top: [topText, top], created, updated }): CitySpec => {
      const byName = Object.fromEntries(NAMES.map((f, i) => [f, names[i]!])) as Record<Name, string>;
      const [longitude, latitude] = place ? place.map(Number) : [null, null];
      const city = {
        id,
        ...byName,
        longitude,
        latitude,
        top,
        created_at: created.served,
        updated_at: updated.served,
      } as City;
      const csv = {
        id: String(id),
        ...byName,
        longitude: place?.[0] ?? '',
        latitude: place?.[1] ?? '',
        top: topText,
        created_at: created.text,
        updated_at: updated.text,
      };
      return {
        city,
        csv,
        json: { id, ...byName, longitude, latitude, top, created_at: created.text, updated_at: updated.text },
      };
    });

const idArb = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(0, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 40),
);
const datasetArb = (maxCities: number) =>
  fc
    .uniqueArray(idArb, { maxLength: maxCities, size: 'max' })
    .chain((ids) => (ids.length ? fc.tuple(...ids.map(citySpecArb)) : fc.constant([] as CitySpec[])));

// ---------------------------------------------------------------- hostile queries

const orderingTermArb = fc.constantFrom(
  ...NAMES,
  ...NAMES.map((f) => `-${f}`),
  'id',
  '-id',
  'top',
  '-top',
  'bogus',
  '',
  ' name_en',
  '-name_ar ',
  '--name_en',
  'NAME_EN',
  'name_en\t',
  'name_x',
);
const orderingArb = fc.oneof(
  fc.array(orderingTermArb, { minLength: 1, maxLength: 3 }).map((terms) => terms.join(',')),
  fc.constantFrom('', ','),
);
const pageSizeArb = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 25 }).map(String), weight: 2 },
  fc.constantFrom(
    '0',
    '-1',
    '-5',
    'abc',
    '1e3',
    '',
    ' 3 ',
    '\t4',
    '+4',
    '2_0',
    '3__0',
    '_3',
    '10.0',
    '99999999999999999999999',
    '9007199254740993',
  ),
);
const pageArb = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 6 }).map(String), weight: 3 },
  fc.integer({ min: -1, max: 30 }).map(String),
  fc.constantFrom('last', 'LAST', ' last', '', 'abc', '2.0', ' 2 ', '+2', '1_0', '99999999999999999999', '0', '-0'),
);
const extraArb = fc.tuple(
  fc.constantFrom('foo', 'format', 'a b', 'é', 'Page', 'page_size ', 'x*~'),
  fc.constantFrom('', 'json', 'a b', '&=?', 'é', '𝒜', '*~', '+', '%'),
);
const pairArb: fc.Arbitrary<QueryPair> = fc.oneof(
  orderingArb.map((v): QueryPair => ['ordering', v]),
  pageSizeArb.map((v): QueryPair => ['page_size', v]),
  pageArb.map((v): QueryPair => ['page', v]),
  extraArb,
);
/** Decoded pairs (repeats and extras included) and the spelling of spaces in the raw query. */
const queryArb = fc.record({ pairs: fc.array(pairArb, { maxLength: 5 }), plusForSpace: fc.boolean() });
const baseUrlArb = fc.constantFrom(
  'http://api.example.com',
  'https://cities.example.org/api/v1',
  'http://127.0.0.1:8080',
);

/** The raw query string a client sends for decoded pairs. */
function rawQuery(pairs: readonly QueryPair[], plusForSpace: boolean): string {
  const encode = (s: string) => (plusForSpace ? encodeURIComponent(s).replaceAll('%20', '+') : encodeURIComponent(s));
  return pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
}

// ---------------------------------------------------------------- the reference model

type Answer =
  | { status: 200; body: { count: number; next: string | null; previous: string | null; results: City[] } }
  | { status: 404; body: { detail: string } };

/** Python's int() on the strings the generators make: ASCII spaces, a sign, digits with single underscores. */
function pythonInt(text: string): bigint | null {
  const m = /^[ \t]*([+-]?)([0-9]+(?:_[0-9]+)*)[ \t]*$/.exec(text);
  return m ? BigInt(`${m[1]}${m[2]!.replaceAll('_', '')}`) : null;
}

/** QueryDict.get: the last value given. */
const lastOf = (pairs: readonly QueryPair[], name: string) => pairs.filter(([k]) => k === name).at(-1)?.[1];

function comparer(collation: Collation): (field: Name) => (a: string, b: string) => number {
  const utf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  const collators = new Map<Name, Intl.Collator>();
  return (field) => {
    if (collation === 'codepoint') return utf8;
    if (!collators.has(field)) collators.set(field, new Intl.Collator(LANGUAGE[field]));
    return collators.get(field)!.compare;
  };
}

/** OrderingFilter: terms of the last `ordering`, stripped, unknown fields dropped; none left = `-top, name_en`. Ties: id. */
function sortCities(cities: readonly City[], orderingParam: string | undefined, collation: Collation): City[] {
  const compareOn = comparer(collation);
  const terms = (orderingParam ? orderingParam.split(',').map((t) => t.trim()) : []).filter((t) =>
    (NAMES as readonly string[]).includes(t.replace(/^-/, '')),
  );
  const keys: ((a: City, b: City) => number)[] = terms.length
    ? terms.map((t) => {
        const field = t.replace(/^-/, '') as Name;
        const sign = t.startsWith('-') ? -1 : 1;
        return (a, b) => sign * compareOn(field)(a[field], b[field]);
      })
    : [(a, b) => Number(b.top) - Number(a.top), (a, b) => compareOn('name_en')(a.name_en, b.name_en)];
  return [...cities].sort((a, b) => {
    for (const key of keys) {
      const d = key(a, b);
      if (d) return d;
    }
    return a.id - b.id;
  });
}

/** DRF's replace_query_param / remove_query_param: values grouped by name, names sorted, quote_plus. */
function linkTo(baseUrl: string, pairs: readonly QueryPair[], page: bigint | null): string {
  const quotePlus = (s: string) =>
    new URLSearchParams({ s }).toString().slice(2).replaceAll('*', '%2A').replaceAll('%7E', '~');
  const groups = new Map<string, string[]>();
  for (const [k, v] of pairs) groups.set(k, [...(groups.get(k) ?? []), v]);
  if (page === null) groups.delete('page');
  else groups.set('page', [String(page)]);
  const names = [...groups.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const query = names.flatMap((k) => groups.get(k)!.map((v) => `${quotePlus(k)}=${quotePlus(v)}`)).join('&');
  return `${baseUrl}/cities/${query ? `?${query}` : ''}`;
}

/** `GET {baseUrl}/cities/?{pairs}` as the reference answers it. */
function referenceAnswer(
  cities: readonly City[],
  pairs: readonly QueryPair[],
  baseUrl: string,
  collation: Collation,
): Answer {
  const sizeParam = lastOf(pairs, 'page_size');
  const parsedSize = sizeParam === undefined ? null : pythonInt(sizeParam);
  const size = parsedSize !== null && parsedSize > 0n ? parsedSize : 10n;
  const count = BigInt(cities.length);
  const pages = count === 0n ? 1n : (count + size - 1n) / size;
  const pageParam = lastOf(pairs, 'page');
  const page = pageParam === undefined ? 1n : pageParam === 'last' ? pages : pythonInt(pageParam);
  if (page === null || page < 1n || page > pages) return { status: 404, body: { detail: 'Invalid page.' } };
  const start = (page - 1n) * size;
  const end = start + size < count ? start + size : count;
  return {
    status: 200,
    body: {
      count: cities.length,
      next: page < pages ? linkTo(baseUrl, pairs, page + 1n) : null,
      previous: page > 1n ? linkTo(baseUrl, pairs, page === 2n ? null : page - 1n) : null,
      results: sortCities(cities, lastOf(pairs, 'ordering'), collation).slice(Number(start), Number(end)),
    },
  };
}

/** The live answer, parsed, with its bytes. */
function liveAnswer(
  index: CityIndex,
  pairs: readonly QueryPair[],
  baseUrl: string,
): { status: number; bytes: Buffer; body: unknown } {
  const answer = answerListing(index, pairs, baseUrl);
  const bytes = Buffer.from(bodyBytes(answer.body));
  return { status: answer.status, bytes, body: JSON.parse(bytes.toString('utf8')) };
}

function expectModelAnswer(
  index: CityIndex,
  cities: readonly City[],
  pairs: readonly QueryPair[],
  baseUrl: string,
  collation: Collation,
): void {
  const live = liveAnswer(index, pairs, baseUrl);
  const expected = referenceAnswer(cities, pairs, baseUrl, collation);
  expect({ status: live.status, body: live.body }).toEqual(expected);
  if (expected.status === 404) expect(live.bytes.toString()).toBe('{"detail":"Invalid page."}');
  else for (const city of (live.body as { results: object[] }).results) expect(Object.keys(city)).toEqual(SPEC_FIELDS);
}

// ---------------------------------------------------------------- files

/** A CSV file of the dataset: columns in the given order, quoting where needed (or everywhere). */
function csvFile(
  specs: readonly CitySpec[],
  style: { columns: readonly string[]; quoteAll: boolean; crlf: boolean; bom: boolean },
): string {
  const quote = (v: string) => (style.quoteAll || /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  const eol = style.crlf ? '\r\n' : '\n';
  const rows = [style.columns.join(','), ...specs.map((s) => style.columns.map((c) => quote(s.csv[c]!)).join(','))];
  return `${style.bom ? '\ufeff' : ''}${rows.join(eol)}${eol}`;
}

function jsonFile(specs: readonly CitySpec[], style: { columns: readonly string[]; indent: number }): string {
  return JSON.stringify(
    specs.map((s) => Object.fromEntries(style.columns.map((c) => [c, s.json[c]]))),
    null,
    style.indent,
  );
}

const fileStyleArb = fc.record({
  format: fc.constantFrom('csv', 'json'),
  columns: fc.shuffledSubarray([...SPEC_FIELDS], { minLength: SPEC_FIELDS.length }),
  quoteAll: fc.boolean(),
  crlf: fc.boolean(),
  bom: fc.boolean(),
  indent: fc.constantFrom(0, 1, 2),
});

let work: string;
let cleanup: () => Promise<void>;
let files = 0;
beforeAll(async () => ({ dir: work, cleanup } = await tempDir('cities-api-model-')));
afterAll(() => cleanup());

type FileStyle = typeof fileStyleArb extends fc.Arbitrary<infer S> ? S : never;

async function writeDataset(specs: readonly CitySpec[], style: FileStyle): Promise<string> {
  const file = join(work, `dataset-${++files}.${style.format}`);
  await writeFile(file, style.format === 'csv' ? csvFile(specs, style) : jsonFile(specs, style));
  return file;
}

// ---------------------------------------------------------------- properties

describe('the reference model reproduces the conformance kit (so it is a model of DRF, not of src/)', () => {
  it.each(KIT_DATASETS.map((d) => [d.name, d] as const))('%s', async (name, { baseUrl }) => {
    const cities = (await readDataset(join(KIT, `${name}.json`))).toCities();
    const answers = (await kitAnswers(name)).filter((a) => a.method === 'GET' && a.level === 'core');
    let compared = 0;
    for (const answer of answers) {
      const pairs = parseQuery(answer.target.split('?')[1] ?? '');
      if (pairs.some(([k, v]) => k === 'format' && v !== 'json')) continue;
      expect(referenceAnswer(cities, pairs, baseUrl, 'codepoint'), answer.target).toEqual({
        status: answer.status,
        body: answer.json,
      });
      compared++;
    }
    expect(compared).toBeGreaterThan(50);
  });
});

const COLLATIONS: [Collation][] = [['codepoint'], ['locale']];

describe("the live answer is the reference model's", () => {
  it.each(COLLATIONS)('%s collation, random datasets and queries', (collation) => {
    fc.assert(
      fc.property(
        datasetArb(30),
        fc.array(queryArb, { minLength: 1, maxLength: 8 }),
        baseUrlArb,
        (specs, queries, baseUrl) => {
          const cities = specs.map((s) => s.city);
          const index = new CityIndex(CityTable.fromCities(cities), collation);
          for (const { pairs, plusForSpace } of queries) {
            const decoded = parseQuery(rawQuery(pairs, plusForSpace));
            expect(decoded).toEqual(pairs);
            expectModelAnswer(index, cities, decoded, baseUrl, collation);
          }
        },
      ),
      { numRuns: collation === 'codepoint' ? 150 : 80 },
    );
  });
});

describe('pages partition the data', () => {
  it.each(COLLATIONS)(
    '%s collation: following next from page 1 visits every city once, in order; previous and page=last agree',
    (collation) => {
      fc.assert(
        fc.property(datasetArb(40), queryArb, baseUrlArb, (specs, { pairs }, baseUrl) => {
          const cities = specs.map((s) => s.city);
          const index = new CityIndex(CityTable.fromCities(cities), collation);
          const first = pairs.filter(([k]) => k !== 'page');
          const pages: {
            bytes: Buffer;
            body: { count: number; next: string | null; previous: string | null; results: City[] };
          }[] = [];
          for (let query: readonly QueryPair[] | null = first; query; ) {
            const live = liveAnswer(index, query, baseUrl);
            expect(live.status).toBe(200);
            const body = live.body as (typeof pages)[number]['body'];
            pages.push({ bytes: live.bytes, body });
            expect(pages.length).toBeLessThanOrEqual(Math.max(1, cities.length));
            if (body.next !== null) expect(body.next.startsWith(`${baseUrl}/cities/?`)).toBe(true);
            query = body.next === null ? null : parseQuery(body.next.slice(body.next.indexOf('?') + 1));
          }
          const visited = pages.flatMap((p) => p.body.results.map((c) => c.id));
          expect(visited).toEqual(sortCities(cities, lastOf(first, 'ordering'), collation).map((c) => c.id));
          expect(
            pages.every((p, i) => p.body.count === cities.length && (i === 0) === (p.body.previous === null)),
          ).toBe(true);
          for (let i = 1; i < pages.length; i++) {
            const previous = pages[i]!.body.previous!;
            expect(
              liveAnswer(index, parseQuery(previous.split('?')[1] ?? ''), baseUrl).bytes.equals(pages[i - 1]!.bytes),
            ).toBe(true);
          }
          expect(liveAnswer(index, [...first, ['page', 'last']], baseUrl).bytes.equals(pages.at(-1)!.bytes)).toBe(true);
          expect(liveAnswer(index, [...first, ['page', String(pages.length + 1)]], baseUrl).status).toBe(404);
        }),
        { numRuns: 100 },
      );
    },
  );
});

describe('a dataset written to a file is read back and served exactly as given', () => {
  it('CSV (any column order, quoting, CRLF, BOM) and JSON', async () => {
    await fc.assert(
      fc.asyncProperty(datasetArb(25), fileStyleArb, baseUrlArb, async (specs, style, baseUrl) => {
        const table = await readDataset(await writeDataset(specs, style));
        const cities = specs.map((s) => s.city);
        expect(table.toCities()).toEqual(cities);
        const index = new CityIndex(table, 'codepoint');
        expectModelAnswer(index, cities, [['page_size', String(Math.max(1, cities.length))]], baseUrl, 'codepoint');
      }),
      { numRuns: 60 },
    );
  });
});

/** The 33 orderings a site can precompute. */
const SITE_ORDERINGS = ['default', ...NAMES.flatMap((f) => [f, `-${f}`])];

describe('a real build writes, for every query the site covers, the live answer byte for byte', () => {
  it('random datasets, collations, page sizes and orderings', async () => {
    await fc.assert(
      fc.asyncProperty(
        datasetArb(20),
        fileStyleArb,
        fc.constantFrom<Collation>('codepoint', 'locale'),
        fc.uniqueArray(fc.constantFrom(1, 2, 3, 5, 7, 10, 20, 50), { minLength: 1, maxLength: 3 }),
        fc.option(fc.shuffledSubarray(SITE_ORDERINGS, { minLength: 1, maxLength: 4 }), { freq: 2 }),
        baseUrlArb,
        fc.array(queryArb, { maxLength: 40 }),
        async (specs, style, collation, pageSizes, orderings, baseUrl, queries) => {
          const out = join(work, `site-${++files}`);
          await build({
            data: await writeDataset(specs, style),
            out,
            baseUrl,
            collation,
            pageSizes,
            orderings: orderings ?? undefined,
            compress: false,
          });
          const cities = specs.map((s) => s.city);
          const index = new CityIndex(CityTable.fromCities(cities), collation);
          const layout = { count: cities.length, pageSizes, orderings: orderings ?? SITE_ORDERINGS };
          const expectFileIsLive = async (pairs: readonly QueryPair[], path: string) => {
            const file = await readFile(join(out, path));
            expect(file.equals(liveAnswer(index, pairs, baseUrl).bytes), `${path} for ${JSON.stringify(pairs)}`).toBe(
              true,
            );
          };
          // Every canonical query of every precomputed ordering and size has its file, and those are all the files.
          const covered = new Set<string>();
          for (const ordering of orderings ?? SITE_ORDERINGS) {
            const base: QueryPair[] = ordering === 'default' ? [] : [['ordering', ordering]];
            for (const size of [undefined, ...pageSizes]) {
              const sized: QueryPair[] = size === undefined ? base : [...base, ['page_size', String(size)]];
              const pages = Math.max(1, Math.ceil(cities.length / (size ?? 10)));
              const pageValues = [undefined, 'last', ...Array.from({ length: pages }, (_, i) => String(i + 1))];
              for (const page of pageValues) {
                const pairs: QueryPair[] = page === undefined ? sized : [...sized, ['page', page]];
                const path = staticPathFor(pairs, layout);
                expect(path, JSON.stringify(pairs)).not.toBeNull();
                await expectFileIsLive(pairs, path!);
                covered.add(path!);
              }
            }
            for (const size of [cities.length + 1000, '99999999999999999999']) {
              const pairs: QueryPair[] = [...base, ['page_size', String(size)]];
              await expectFileIsLive(pairs, staticPathFor(pairs, layout)!);
            }
          }
          const written = (await readdir(join(out, 'cities'), { recursive: true, withFileTypes: true }))
            .filter((e) => e.isFile())
            .map((e) => relative(out, join(e.parentPath, e.name)));
          const allFiles = (orderings ?? SITE_ORDERINGS).map((o) => `cities/${o}/all-${cities.length}.json`);
          expect(new Set(written)).toEqual(new Set([...covered, ...allFiles, ROUTES.extras.notPrecomputed]));
          // Random queries: whatever maps to a file is answered by it as live; and live is the model.
          for (const { pairs } of queries) {
            const path = staticPathFor(pairs, layout);
            if (path) await expectFileIsLive(pairs, path);
            expectModelAnswer(index, cities, pairs, baseUrl, collation);
          }
        },
      ),
      // Shrinking would rebuild sites for minutes: report the first failing case as found.
      { numRuns: 8, endOnFailure: true },
    );
  });
});
