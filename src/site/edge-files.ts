import { utf8 } from '../core/bytes.js';
import type { CityIndex } from '../core/city-index.js';
import { NAME_FIELDS, type NameField } from '../core/fields.js';
import { fill, ROUTES } from '../core/route-table.js';
import { chunkParts, encodeRanks, tagBytes } from './edge-format.js';
import type { SiteFile } from './pages.js';

// The files an edge function answers live queries from (see edge-source.ts): the collation done
// here, at build time, as each field's ascending order of dataset positions, and the cities in
// chunks of consecutive positions, so that a request reads two or three files of a few hundred KB
// instead of the whole dataset (71 MB at 140k cities), and never needs ICU.

/**
 * Cities per chunk: about 130 KB at 140k cities (500 bytes a city), so a page of 10 in any
 * ordering reads at most 10 such chunks; at most 13 MB with cities of the 50 KiB limit.
 */
export const CHUNK_CITIES = 256;
/** The rank files: one per name field, and the default ordering's. */
export const RANK_FILES = NAME_FIELDS.length + 1;

/** The edge index's content: what a reader needs before any other file. */
export interface EdgeIndex {
  readonly format: 1;
  readonly count: number;
  readonly chunkCities: number;
  /** Hex tag of the data (dataset and collation), repeated in every binary file's header. */
  readonly tag: string;
  /** Distinct values of each field under the collation. */
  readonly distinct: Readonly<Record<NameField, number>>;
}

export const rankPath = (name: NameField | typeof ROUTES.absent) => fill(ROUTES.edge.ranks, { ordering: name });
export const chunkPath = (chunk: number) => fill(ROUTES.edge.chunk, { chunk });
export const chunkCount = (cities: number, chunkCities = CHUNK_CITIES) => Math.ceil(cities / chunkCities);

/** Every edge file of a site, in a stable order; `tag` names the dataset and collation they come from. */
export function* edgeFiles(index: CityIndex, tag: string): Generator<SiteFile> {
  const tagged = tagBytes(tag);
  // One field at a time, its ranks and order dropped once written; the index (which lists every
  // field's distinct values) follows them.
  const distinct = {} as Record<NameField, number>;
  for (const field of NAME_FIELDS) {
    const { order, ranks } = index.ascending(field);
    distinct[field] = ranks.distinct;
    yield {
      path: rankPath(field),
      body: [encodeRanks(order, (i) => i === 0 || ranks.ranks[order[i]!] !== ranks.ranks[order[i - 1]!], tagged)],
    };
  }
  const order = index.single([]);
  const { ranks } = index.ranks('name_en');
  const { top } = index.table;
  const differs = (a: number, b: number) => top[a] !== top[b] || ranks[a] !== ranks[b];
  yield {
    path: rankPath(ROUTES.absent),
    body: [encodeRanks(order, (i) => i === 0 || differs(order[i]!, order[i - 1]!), tagged)],
  };
  const head: EdgeIndex = { format: 1, count: index.count, chunkCities: CHUNK_CITIES, tag, distinct };
  yield { path: ROUTES.edge.index, body: [utf8(`${JSON.stringify(head)}\n`)] };
  for (let chunk = 0; chunk < chunkCount(index.count); chunk++) {
    const end = Math.min(index.count, (chunk + 1) * CHUNK_CITIES);
    const cities = Array.from({ length: end - chunk * CHUNK_CITIES }, (_, i) => index.json(chunk * CHUNK_CITIES + i));
    // Parts, not one buffer: the cities are the table's own bytes, written without a copy (at
    // 140k cities the chunks would otherwise allocate 71 MB within seconds, faster than GC frees it).
    const parts = chunkParts(cities, tagged);
    yield { path: chunkPath(chunk), body: { [Symbol.iterator]: () => parts[Symbol.iterator]() } };
  }
}

/** Bytes of the edge files of `count` cities whose JSON takes `cityBytes`, for the site's size estimate. */
export function edgeBytes(count: number, cityBytes: number): number {
  const header = 16;
  const ranks = RANK_FILES * (header + 4 * count + Math.ceil(count / 8));
  const chunks = chunkCount(count) * header + 4 * count + cityBytes;
  return 400 + ranks + chunks;
}

/** Files of the edge data of `count` cities. */
export function edgeFileCount(count: number): number {
  return 1 + RANK_FILES + chunkCount(count);
}
