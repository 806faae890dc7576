import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityTable } from '../src/core/city-table.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { DrfReference, drfMissing, PYTHON, type RecordedAnswer, type ReferenceRequest } from './drf-oracle.js';
import { compareAnswers, ourAnswer, ourSite } from './oracle-compare.js';
import { datasetFile, oracleDataset } from './oracle-datasets.js';
import { oracleRequest } from './oracle-requests.js';
import { Rng } from './oracle-rng.js';
import { makeCity, tempDir } from './helpers.js';
import { MAX_TARGET_BYTES } from '../src/http/limits.js';

// The real reference as a test oracle: seeded hostile datasets and queries, answered by the real
// DRF (test/drf-reference, through Django's test client) and by route() in-process; every answer
// must be equal byte for byte, or the difference be one of JUSTIFIED (oracle-compare.ts); where the
// real service is not deterministic, the reference is pinned (drf-reference/main.py). A bigger run by hand:
//   ORACLE_SEED=7 ORACLE_DATASETS=20 ORACLE_REQUESTS=500 npm run oracle

const SEED = setting('ORACLE_SEED', 1);
const DATASETS = setting('ORACLE_DATASETS', 12);
const REQUESTS = setting('ORACLE_REQUESTS', 250);
const EXAMPLES = 3;

function setting(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) throw new Error(`${name}=${JSON.stringify(text)}: expected a whole number`);
  return Number(text);
}

const missing = drfMissing();
if (missing) {
  const message = `${missing}: install it with "apt-get install -y python3-djangorestframework"`;
  if (process.env.CI === 'true') throw new Error(`${message} (CI must not skip the DRF oracle)`);
  console.warn(`\n!!! SKIPPING the DRF oracle tests: ${message} !!!\n`);
}

let drf: DrfReference;
let work: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  if (missing) return;
  drf = new DrfReference();
  ({ dir: work, cleanup } = await tempDir('cities-api-oracle-'));
});
afterAll(async () => {
  drf?.close();
  await cleanup?.();
});

describe.skipIf(missing !== null)(`the real DRF (${PYTHON}) as oracle`, () => {
  it(`seed ${SEED}: ${DATASETS} hostile datasets x ${REQUESTS} hostile requests answer as DRF does`, async () => {
    const failures = new Map<string, string[]>();
    const justified = new Map<string, number>();
    let compared = 0;
    for (let n = 0; n < DATASETS; n++) {
      const rng = new Rng(Math.imul(SEED, 0x9e3779b1) ^ (n + 1));
      const data = oracleDataset(rng, n);
      const file = join(work, `dataset-${n}.${data.format}`);
      await writeFile(file, datasetFile(rng, data));
      const table = await readDataset(file);
      expect(table.toCities(), `dataset ${n} read back from ${data.format}`).toEqual(data.cities);
      const ours = ourSite(table, data);
      const requests: ReferenceRequest[] = Array.from({ length: REQUESTS }, () =>
        oracleRequest(rng, data.cities.length, ours.site.spec.mount),
      );
      const theirs = await drf.answer(data.cities, data.coordinates, data.baseUrl, requests);
      requests.forEach((req, i) => {
        const verdict = compareAnswers(req, ourAnswer(req, ours), theirs[i]!);
        compared++;
        if (!verdict.equal) {
          if (!failures.has(verdict.kind)) failures.set(verdict.kind, []);
          failures
            .get(verdict.kind)!
            .push(
              `dataset ${n} (${data.cities.length} cities, ${data.baseUrl}) ${describeRequest(req)}: ${verdict.what}`,
            );
        } else if (verdict.justified) justified.set(verdict.justified, (justified.get(verdict.justified) ?? 0) + 1);
      });
    }
    const total = [...failures.values()].reduce((sum, list) => sum + list.length, 0);
    console.log(
      `DRF oracle, seed ${SEED}: ${compared} requests over ${DATASETS} datasets, ${total} differences in ${failures.size} classes; justified: ${JSON.stringify(Object.fromEntries(justified))}`,
    );
    // Each class of difference with its count and a few examples (the smallest targets first).
    const report = [...failures].map(([kind, list]) => ({
      kind,
      count: list.length,
      examples: list.sort((a, b) => a.length - b.length).slice(0, EXAMPLES),
    }));
    expect(
      report,
      `differences (reproduce: ORACLE_SEED=${SEED} ORACLE_DATASETS=${DATASETS} ORACLE_REQUESTS=${REQUESTS} npm run oracle)`,
    ).toEqual([]);
    expect(compared).toBe(DATASETS * REQUESTS);
  }, 600_000);
});

/** Each difference the oracle found, as a named request replayed against the real DRF. */
const FOUND: readonly [string, ReferenceRequest][] = [
  [
    '#12 a BOM before the ordering field (DRF: unknown field, default order)',
    { method: 'GET', target: '/cities/?ordering=%EF%BB%BFname_en' },
  ],
  [
    '#12 a BOM before the page name (DRF: another parameter, page 1)',
    { method: 'GET', target: '/cities/?%EF%BB%BFpage=2' },
  ],
  [
    '#12 a BOM before the page number (DRF: 404, not a site file)',
    { method: 'GET', target: '/cities/?page=%EF%BB%BF2' },
  ],
  ['#12 links keep a BOM', { method: 'GET', target: '/cities/?%EF%BB%BFpage=x&ordering=%EF%BB%BF-name_en' }],
  ['#13 U+001F after the page number (int() refuses it)', { method: 'GET', target: '/cities/?page=1%1F' }],
  ['#13 U+001C before the page size (the default size)', { method: 'GET', target: '/cities/?page_size=%1C5' }],
  [
    'a page size for which Django counts 0 pages, page=last',
    { method: 'GET', target: `/cities/?page_size=${11n << 1075n}&page=last` },
  ],
  [
    'a page size of 4301 digits (int() refuses it: the default size, not a site file)',
    { method: 'GET', target: `/cities/?page_size=1${'0'.repeat(4300)}` },
  ],
  ["Django's 404 page", { method: 'GET', target: '/cities/1' }],
  ["Django's 400 page (more than 1000 fields)", { method: 'GET', target: `/cities/?${'a&'.repeat(1000)}` }],
  ["the redirect's Location through iri_to_uri", { method: 'GET', target: '/cities?a={|}&b="<x>"^`' }],
  [
    'Accept tokens are str.strip()ed (U+001C, U+001F)',
    { method: 'GET', target: '/cities/', accept: '\x1capplication/json; indent=3\x1f' },
  ],
  [
    'Accept: NEL around a token',
    { method: 'GET', target: '/cities/?page=2', accept: '\x85application/json; indent=2\x85' },
  ],
  [
    "Accept: a wildcard's parameters are re-joined and parsed again",
    { method: 'GET', target: '/cities/', accept: '*/*; indent="4;indent=2"' },
  ],
  [
    'Accept: an escaped quote counts when splitting parameters',
    { method: 'GET', target: '/cities/', accept: 'application/json; x="a\\";b"; indent=2' },
  ],
  [
    "Accept: RFC 2231 name*=charset''value",
    { method: 'GET', target: '/cities/', accept: "application/json; indent*=utf-8''%35" },
  ],
];

describe.skipIf(missing !== null)('differences the oracle found, replayed against the real DRF', () => {
  const data = oracleDataset(new Rng(SEED), 3);
  const shape = { ...data, baseUrl: 'http://api.example.com' };
  let ours: ReturnType<typeof ourSite>;
  let theirs: RecordedAnswer[];
  beforeAll(async () => {
    ours = ourSite(CityTable.fromCities(data.cities), shape);
    theirs = await drf.answer(
      data.cities,
      data.coordinates,
      shape.baseUrl,
      FOUND.map(([, req]) => req),
    );
  });

  it.each(FOUND.map(([name, req], i) => [name, req, i] as const))('%s', (_, req, i) => {
    expect(compareAnswers(req, ourAnswer(req, ours), theirs[i]!)).toEqual({ equal: true });
  });
});

/** 1001 cities: pages of one city number 1 to 1001 (digit counts 1 to 4). */
const MANY = Array.from({ length: 1001 }, (_, i) => makeCity(i + 1, { name: `C${String(i).padStart(4, '0')}` }));
const MANY_BASE = 'https://x.example:8443/a/b';
const M = '/a/b/cities/';
/** `start` and as many `fill`s (then `y`s) after it as make a target of exactly MAX_TARGET_BYTES, the longest answered. */
const atLimit = (start: string, fill: string) => {
  const room = MAX_TARGET_BYTES - start.length;
  return `${start}${fill.repeat(Math.floor(room / fill.length))}${'y'.repeat(room % fill.length)}`;
};
const boundaryPages = [1, 2, 3, 9, 10, 11, 99, 100, 101, 999, 1000, 1001].map((page) => `page=${page}`);

/**
 * Targets crafted against the query parsed in place in the request target (a4c053d: percent-escapes
 * cut at the end, a character's UTF-8 split between escapes, a target at its length limit) and the
 * links written around the page number (9780683: page numbers at digit-count boundaries, the last
 * page, parameters sorted before and after it, a base URL with a port and a path), replayed against the real DRF.
 */
const CRAFTED: readonly [string, ReferenceRequest][] = [
  ...boundaryPages.map((page): [string, ReferenceRequest] => [
    `links of ${page} of pages of one city`,
    { method: 'GET', target: `${M}?page_size=1&${page}` },
  ]),
  ['links of the last page, asked as last', { method: 'GET', target: `${M}?page_size=1&page=last` }],
  [
    'links around page 100 with fields sorted before and after it',
    { method: 'GET', target: `${M}?z=1&page=100&a=2&page_size=1&page_size=1` },
  ],
  [
    'links of page 10 with a field named like a prefix of page',
    { method: 'GET', target: `${M}?pag=1&pagee=2&page=10&page_size=1` },
  ],
  ['a page number escaped (%31%30: page 10)', { method: 'GET', target: `${M}?page=%31%30&page_size=1` }],
  ['a % at the very end of the query', { method: 'GET', target: `${M}?page_size=1&page=9%` }],
  ['a % and one hex digit at the very end', { method: 'GET', target: `${M}?page_size=1&page=9&x=%4` }],
  ['a % and one hex digit ending a field before page', { method: 'GET', target: `${M}?a=%4&page=9&page_size=1` }],
  ['%% then an escape', { method: 'GET', target: `${M}?a=%%41&page=99&page_size=1` }],
  ['a UTF-8 character split between two fields', { method: 'GET', target: `${M}?a=%E5%90&b=%8D&page=2&page_size=1` }],
  ['a UTF-8 character cut by the end of the query', { method: 'GET', target: `${M}?page_size=1&page=2&a=%E5%90` }],
  ['a UTF-8 character split by + and &', { method: 'GET', target: `${M}?a=%E5+%90&%8D=1&page=10&page_size=1` }],
  ['an escape cut by the fragment', { method: 'GET', target: `${M}?page_size=1&page=1%30#0` }],
  [
    'a target of exactly the length limit, ending in %',
    { method: 'GET', target: `${atLimit(`${M}?page_size=1&page=10&x=`, 'y').slice(0, -1)}%` },
  ],
  [
    'a target of exactly the length limit, a long value sorted before page',
    { method: 'GET', target: atLimit(`${M}?page=100&page_size=1&a=`, '%41') },
  ],
];

describe.skipIf(missing !== null)('crafted targets and page links, against the real DRF', () => {
  let ours: ReturnType<typeof ourSite>;
  let theirs: RecordedAnswer[];
  beforeAll(async () => {
    ours = ourSite(CityTable.fromCities(MANY), { baseUrl: MANY_BASE, pageSizes: [], orderings: ['default'] });
    const coordinates = MANY.map((c) => [String(c.longitude), String(c.latitude)] as const);
    theirs = await drf.answer(
      MANY,
      coordinates,
      MANY_BASE,
      CRAFTED.map(([, req]) => req),
    );
  }, 120_000);

  it.each(CRAFTED.map(([name, req], i) => [name, req, i] as const))('%s', (_, req, i) => {
    expect(compareAnswers(req, ourAnswer(req, ours), theirs[i]!)).toEqual({ equal: true });
  });
});

function describeRequest(req: ReferenceRequest): string {
  const target =
    req.target.length > 200
      ? `${req.target.slice(0, 120)}[...${req.target.length - 180} bytes...]${req.target.slice(-60)}`
      : req.target;
  const visible = (text: string) =>
    JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${req.method} ${target}${req.accept === undefined ? '' : ` (Accept: ${visible(req.accept)})`}`;
}
