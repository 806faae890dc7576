import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { Collation } from '../src/core/collation.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { PRECOMPUTABLE_ORDERINGS } from '../src/core/ordering.js';
import { parseQuery } from '../src/core/query-string.js';
import { ROUTES } from '../src/core/route-table.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import type { EdgeSource } from '../src/site/edge-source.js';
import { KIT, makeCity } from './helpers.js';

// What the edge source tests share: the kit's datasets as indexes, a table of queries of every
// kind, and the answers an edge source gives compared with answerListing's, byte for byte.

export const BASE = 'http://api.example.com';
export const KIT_BASES: Record<string, string> = {
  cities48: BASE,
  cities11: BASE,
  empty: BASE,
  cities1234: BASE,
  prefixed30: 'https://cities.example.org/api/v1',
};

/** Indexes made once per test file (the cases only read them: each builds its own edge source over one). */
const made = new Map<string, CityIndex | Promise<CityIndex>>();
function once<T extends CityIndex | Promise<CityIndex>>(key: string, make: () => T): T {
  if (!made.has(key)) made.set(key, make());
  return made.get(key) as T;
}

export function kitIndex(name: string, collation: Collation = 'codepoint'): Promise<CityIndex> {
  return once(
    `kit ${name} ${collation}`,
    async () => new CityIndex(await readDataset(join(KIT, `${name}.json`)), collation),
  );
}

/** A streamed answer's status and bytes. */
export async function streamed(
  source: EdgeSource,
  query: string,
  base = BASE,
): Promise<{ status: number; body: Buffer }> {
  const { status, body } = await source.stream(parseQuery(query), base);
  const parts: Uint8Array[] = [];
  for await (const part of body) parts.push(part);
  return { status, body: Buffer.concat(parts) };
}

/**
 * answerListing's status and bytes, made once per index, base and query in a test file: cases that
 * ask one index the same table through sources of other options compare with the same answers.
 */
const listings = new WeakMap<CityIndex, Map<string, { status: number; body: Uint8Array }>>();
function listing(index: CityIndex, query: string, base: string): { status: number; body: Uint8Array } {
  let answers = listings.get(index);
  if (!answers) listings.set(index, (answers = new Map()));
  const key = `${base} ${query}`;
  let answer = answers.get(key);
  if (!answer) {
    const { status, body } = answerListing(index, parseQuery(query), base);
    // A copy: the answer's parts are not this cache's to keep.
    answers.set(key, (answer = { status, body: Buffer.from(bodyBytes(body)) }));
  }
  return answer;
}

/** Each query whose edge answer, assembled or streamed, differs from answerListing's: status and bytes. */
export async function differences(
  index: CityIndex,
  source: EdgeSource,
  queries: readonly string[],
  base = BASE,
): Promise<string[]> {
  const found: string[] = [];
  for (const query of queries) {
    const pairs = parseQuery(query);
    const want = listing(index, query, base);
    const got = await source.answer(pairs, base);
    // A view of the answer's bytes, not a copy (Buffer.from of a Uint8Array copies: 4 % of a pass over cities1234's table).
    const bytes = bodyBytes(got.body);
    const gotBytes = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (got.status !== want.status || !gotBytes.equals(want.body))
      found.push(`?${query}: ${got.status} ${gotBytes.toString().slice(0, 120)}`);
    const stream = await streamed(source, query, base);
    if (stream.status !== want.status || !stream.body.equals(want.body))
      found.push(`?${query} streamed: ${stream.status} ${stream.body.toString().slice(0, 120)}`);
  }
  return found;
}

export const MULTI = [
  'name_en,-name_ar',
  '-name_ar,name_en',
  'name_en,name_ar,name_fr',
  '-name_fr,name_en,-name_de',
  'name_en,-name_en',
  ' name_de , -name_sp',
  'id,-name_ch',
  'bogus',
  'top,name_uk',
  ',,-name_ru,',
  'name_ch,name_ur',
];
const SIZES = [undefined, '1', '3', '7', '10', '20', '100', '1000', '0', '-5', 'abc', ' 7', '99999999999999999999999'];

/** Orderings × page sizes × pages (first, second, last, `last`, past the end, invalid), for `count` cities. */
export function queryTable(count: number): string[] {
  const queries: string[] = [];
  for (const ordering of [undefined, ...PRECOMPUTABLE_ORDERINGS.slice(1), ...MULTI]) {
    for (const size of SIZES) {
      const n = Number(size);
      const perPage = Number.isSafeInteger(n) && n > 0 ? n : size === SIZES.at(-1) ? count : 10;
      const pages = Math.max(1, Math.ceil(count / perPage));
      for (const page of [undefined, '1', '2', String(pages), 'last', String(pages + 1), '0', 'x']) {
        const pairs = [
          ordering === undefined ? '' : `ordering=${encodeURIComponent(ordering)}`,
          size === undefined ? '' : `page_size=${encodeURIComponent(size)}`,
          page === undefined ? '' : `page=${page}`,
        ];
        queries.push(pairs.filter(Boolean).join('&'));
      }
    }
  }
  // Each query once: with one or two pages, '1', '2' and the last page's number name the same page twice.
  return [...new Set(queries)];
}

/** The GET queries of a kit dataset's requests. */
export function kitQueries(name: string): string[] {
  return readFileSync(join(KIT, `${name}.requests.txt`), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(ROUTES.endpoint) || line.startsWith(`GET ${ROUTES.endpoint}`))
    .map((line) => line.replace(/^GET /, '').split('?').slice(1).join('?'));
}

/**
 * `n` cities of about 3.3 KB (names of 180 characters) whose name_de takes one of `groups` values
 * (tie groups of n / groups cities, each spread evenly over name_en's order) and every other name
 * one of its own, in an order unrelated to the ids: a page of name_de,name_en lies 1 city in
 * `groups` in name_en's layout, and scattered over its tie group in name_de's.
 */
export function spreadIndex(n: number, groups: number): CityIndex {
  const pad = 'x'.repeat(174);
  return once(
    `spread ${n} ${groups}`,
    () =>
      new CityIndex(
        CityTable.fromCities(
          Array.from({ length: n }, (_, i) =>
            makeCity(i + 1, { name: `${pad}${String((i * 7919) % n).padStart(6, '0')}`, name_de: `D${i % groups}` }),
          ),
        ),
        'codepoint',
      ),
  );
}

/** `n` cities in ids not in file order, names with many ties on name_en (thousands) and few on name_ar. */
export function tiedIndex(n: number): CityIndex {
  return once(
    `tied ${n}`,
    () =>
      new CityIndex(
        CityTable.fromCities(
          Array.from({ length: n }, (_, i) =>
            makeCity(((i * 7919) % n) + 1, { name: `N${i % 13}`, name_ar: `A${i % 1009}`, top: i % 5 === 0 }),
          ),
        ),
        'codepoint',
      ),
  );
}
