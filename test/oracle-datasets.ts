import { CITY_FIELDS, NAME_FIELDS, type City } from '../src/core/fields.js';
import type { Rng } from './oracle-rng.js';

// Seeded hostile datasets for the DRF oracle: names with spaces of every kind, BOM, control
// characters, RTL, astral and combining characters, duplicates and ties; empty and 1-city
// datasets; ids and coordinates at their limits; timestamps from year 1 to 9999.

export interface OracleDataset {
  readonly cities: City[];
  /** Each city's coordinates as the file spells them (decimal text), for the reference's Decimal. */
  readonly coordinates: readonly (readonly [string, string] | null)[];
  readonly baseUrl: string;
  readonly format: 'csv' | 'json';
  /** The site's precomputed page sizes and orderings (undefined: all 33). */
  readonly pageSizes: number[];
  readonly orderings: string[] | undefined;
}

const PIECES = [
  'a',
  'B',
  'z',
  'Z',
  'é',
  'e\u0301',
  'Ａ',
  'ｚ',
  'ß',
  'İ',
  'ı',
  '東京',
  'القاهرة',
  'תל אביב',
  'مدينة',
  '𝒜',
  '😀',
  '👍🏽',
  ' ',
  '  ',
  '\t',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\u2029',
  '\u0085',
  '\u200b',
  '\u200f',
  '\u202e',
  '\ufeff',
  '\u180e',
  '\u0002', // not U+0000: a dataset holding it is refused, as a POST of it is
  '\u0001',
  '\u001b',
  '\u001f',
  '\u007f',
  '\n',
  '\r\n',
  '\r',
  '"',
  "'",
  ',',
  ';',
  '\\',
  '/',
  '<',
  '&',
  '%',
  '\ue000',
  '\uffff',
  '\ufffd',
  '\ufdd0',
  '\u{10ffff}',
  '\u{1f600}\u200d\u{1f601}',
  '0',
  '9',
  '-',
  '+',
  '_',
];
const COMMON = [
  'Paris',
  ' Paris',
  'Paris ',
  'paris',
  'PARIS',
  '\ufeffParis',
  'Paris\u0001', // not U+0000 (refused in a dataset)
  'é',
  'e\u0301',
  'Ａ',
  'A',
  '𝒜',
  '\uffff',
  '\u{10000}',
];

export const BASE_URLS = [
  'http://api.example.com',
  'https://cities.example.org/api/v1',
  'http://127.0.0.1:8080',
  'https://x.example/a/b',
];

/** The dataset number `n` of a run: the first few are the special shapes, then random ones. */
export function oracleDataset(rng: Rng, n: number): OracleDataset {
  const count = [0, 1, 2, 11][n] ?? rng.pick([rng.int(3, 15), rng.int(16, 45), rng.int(46, 130)]);
  const flavor = n === 4 ? 'ties' : n === 5 ? 'long' : rng.pick(['hostile', 'hostile', 'ties', 'mixed']);
  const ids = uniqueIds(rng, count);
  const cities: City[] = [];
  const coordinates: (readonly [string, string] | null)[] = [];
  const allTop = flavor === 'ties' ? rng.chance(0.5) : null;
  for (const id of ids) {
    const place = rng.chance(0.2) ? null : ([coordinate(rng, 180), coordinate(rng, 90)] as const);
    const created = timestamp(rng);
    const city = {
      id,
      longitude: place ? Number(place[0]) + 0 : null,
      latitude: place ? Number(place[1]) + 0 : null,
      top: allTop ?? rng.chance(0.3),
      created_at: created,
      updated_at: rng.chance(0.5) ? created : timestamp(rng),
    } as City;
    const shared = rng.chance(0.3) ? name(rng, flavor) : null;
    for (const field of NAME_FIELDS) city[field] = shared && rng.chance(0.6) ? shared : name(rng, flavor);
    cities.push(city);
    coordinates.push(place);
  }
  const sizes = [1, 2, 3, 5, 7, 10, 20, 25, 50, 100];
  return {
    cities,
    coordinates,
    baseUrl: rng.pick(BASE_URLS),
    format: rng.chance(0.5) ? 'csv' : 'json',
    pageSizes: sizes.filter(() => rng.chance(0.3)),
    orderings: rng.chance(0.5)
      ? undefined
      : ['default', ...NAME_FIELDS.flatMap((f) => [f, `-${f}`])].filter(() => rng.chance(0.4)),
  };
}

function name(rng: Rng, flavor: string): string {
  if (flavor === 'ties') return rng.pick(['Paris', 'paris', 'Paris']);
  if (flavor === 'long')
    return rng
      .pick(PIECES)
      .repeat(255)
      .slice(0, 255)
      .replace(/[\ud800-\udbff]$/, 'x');
  if (flavor === 'mixed' && rng.chance(0.5)) return rng.pick(COMMON);
  const parts = Array.from({ length: rng.int(1, 4) }, () => rng.pick(PIECES));
  return parts.join('');
}

function uniqueIds(rng: Rng, count: number): number[] {
  const special = [0, 1, -1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 31, 2 ** 32 + 1];
  const ids = new Set<number>();
  while (ids.size < count) ids.add(rng.chance(0.1) ? rng.pick(special) : rng.int(-5000, 5000));
  return [...ids];
}

/** Decimal text with 0-6 places within ±limit, at the limits now and then. */
function coordinate(rng: Rng, limit: number): string {
  const special = [
    `${limit}`,
    `-${limit}`,
    '0',
    '-0',
    '0.000001',
    '-0.000001',
    `${limit - 1}.999999`,
    '0.1',
    '1.10',
    '-0.0',
  ];
  if (rng.chance(0.15)) return rng.pick(special);
  const micro = rng.int(-limit * 1e6, limit * 1e6);
  const places = rng.int(0, 6);
  const value = (micro / 1e6).toFixed(places);
  return Math.abs(Number(value)) > limit ? String(limit) : value;
}

/** A served timestamp: `YYYY-MM-DDTHH:MM:SS.ffffffZ`, year 1 to 9999. */
function timestamp(rng: Rng): string {
  const year = rng.chance(0.1) ? rng.pick([1, 999, 1000, 1969, 1970, 9999]) : rng.int(1900, 2100);
  const date = new Date(0);
  date.setUTCFullYear(year, rng.int(0, 11), rng.int(1, 28));
  date.setUTCHours(rng.int(0, 23), rng.int(0, 59), rng.int(0, 59));
  const micro = rng.chance(0.3) ? 0 : rng.int(0, 999_999);
  return `${String(year).padStart(4, '0')}${date.toISOString().slice(-20, -5)}.${String(micro).padStart(6, '0')}Z`;
}

/** The dataset as a file our reader takes: CSV (shuffled columns, quoting where needed or always) or JSON. */
export function datasetFile(rng: Rng, data: OracleDataset): string {
  const coordinateText = (i: number, field: 'longitude' | 'latitude') =>
    data.coordinates[i]?.[field === 'longitude' ? 0 : 1] ?? '';
  if (data.format === 'json') {
    const records = data.cities.map((c) => ({
      ...c,
      created_at: rng.chance(0.5) ? c.created_at.replace('Z', '+00:00') : c.created_at,
    }));
    return JSON.stringify(records, null, rng.pick([0, 2]));
  }
  const columns = rng.shuffle([...CITY_FIELDS]);
  const quoteAll = rng.chance(0.3);
  const quote = (v: string) => (quoteAll || /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  const eol = rng.pick(['\n', '\r\n']);
  const rows = data.cities.map((c, i) =>
    columns.map((f) => quote(f === 'longitude' || f === 'latitude' ? coordinateText(i, f) : String(c[f]))).join(','),
  );
  return `${rng.chance(0.3) ? '\ufeff' : ''}${[columns.join(','), ...rows].join(eol)}${eol}`;
}
