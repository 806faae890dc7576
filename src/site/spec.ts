import { isCollation, type Collation } from '../core/collation.js';
import { CitiesApiError, optionNamed, shortText } from '../core/errors.js';
import { PRECOMPUTABLE_ORDERINGS } from '../core/ordering.js';
import { canonicalPath, mountOf } from '../core/url-path.js';

/** What a site is built for, as its manifest records it. */
export interface SiteSettings {
  readonly baseUrl: string;
  readonly collation: Collation;
  readonly pageSizes: readonly number[];
  /** Precomputed orderings (`default`, `name_en`, `-name_ar`, ...). */
  readonly orderings: readonly string[];
  readonly defaultPageSize: number;
  /** How the `.gz`/`.br` beside each page are made, or `none` when there are none. */
  readonly compression: Compression;
  /** Where static hosts send what no file covers (a running `cities-api serve`, an edge function), if anywhere. */
  readonly liveUrl: string | null;
  /**
   * The one host the site is built for, if one (`--for`): `cloudflare`, Workers' static assets
   * (site/asset-budget.ts): no `.gz`/`.br` (Cloudflare compresses), no other host's files, and
   * only the first pages of each list, within its file budget (the Worker computes the others).
   */
  readonly host?: Host;
  /** Pages precomputed from the start of each list (an ordering at a page size), besides its `last`; absent: every page. */
  readonly firstPages?: number;
  /**
   * A site for a host that reads files only whole (Cloudflare): the most bytes of a block of a
   * large tie group in the edge data (site/edge-cuts.ts); absent: no group is cut finer.
   */
  readonly fineBlockBytes?: number;
  /** A site for a host: the number of its edge data files (the index, rank files and blocks), as written. */
  readonly edgeFiles?: number;
}

/**
 * A site as everything that builds, serves or hosts it sees it: its settings, the number of
 * cities, and what follows from them (computed here, once).
 */
export interface SiteSpec extends SiteSettings {
  readonly count: number;
  /** The base URL's path, decoded as request paths are matched: `` or `/api/v1` or `/café`. */
  readonly mount: string;
}

export function siteSpec(settings: SiteSettings, count: number): SiteSpec {
  return { ...settings, count, mount: mountOf(settings.baseUrl) };
}

/** `none`: no `.gz`/`.br`; `fast`: gzip 6, brotli 2; `best`: gzip 9, brotli 11 (store/compression.ts). */
export const COMPRESSIONS = ['none', 'fast', 'best'] as const;
export type Compression = (typeof COMPRESSIONS)[number];
/** A level that writes `.gz`/`.br`. */
export type CompressionLevel = Exclude<Compression, 'none'>;
/** Builds stay at the disk's speed; `best` is for the build a CDN serves from (docs/deploy.md, with the figures). */
export const DEFAULT_COMPRESSION: Compression = 'fast';

/** `--for`: the hosts a site can be built for alone. */
export const HOSTS = ['cloudflare'] as const;
export type Host = (typeof HOSTS)[number];

export function parseHost(value: string): Host {
  if (!(HOSTS as readonly string[]).includes(value))
    throw new CitiesApiError(
      `invalid ${optionNamed('builtFor')} "${shortText(String(value))}": use ${HOSTS.join(', ')}`,
      2,
    );
  return value as Host;
}

export const DEFAULT_DATA = 'data/cities.csv';
export const DEFAULT_OUT = 'dist';
export const DEFAULT_BASE_URL = 'http://localhost:8080';
export { DEFAULT_COLLATION } from '../core/collation.js';
export const DEFAULT_PAGE_SIZES: readonly number[] = [10, 20, 50, 100];

/**
 * An absolute http(s) URL without query or fragment, normalized, with no trailing slash; its path
 * spelled as the reference writes it in links (Django's escape_uri_path of the decoded path).
 */
export function normalizeBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CitiesApiError(
      `invalid base URL "${shortText(text)}": expected an absolute URL such as https://example.org/api/v1`,
      2,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CitiesApiError(`invalid base URL "${shortText(text)}": only http and https are supported`, 2);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new CitiesApiError(
      `invalid base URL "${shortText(text)}": it must not carry a query, fragment or credentials`,
      2,
    );
  }
  return `${url.protocol}//${url.host}${canonicalPath(url)}`;
}

/** `10,20,50,100` as distinct positive integers in ascending order. */
export function parsePageSizes(value: string | readonly number[]): number[] {
  const items = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value.map(String);
  const sizes = items.map((item) => {
    if (!/^[1-9][0-9]*$/.test(item) || !Number.isSafeInteger(Number(item))) {
      throw new CitiesApiError(
        `invalid page size "${shortText(item)}": page sizes are positive integers, e.g. 10,20,50,100`,
        2,
      );
    }
    return Number(item);
  });
  if (!sizes.length) throw new CitiesApiError('no page sizes given: expected a list such as 10,20,50,100', 2);
  return [...new Set(sizes)].sort((a, b) => a - b);
}

/** Orderings to precompute (`default`, `name_en`, `-name_ar`, ... or `all`), in build order. */
export function parseOrderings(value: string | readonly string[]): string[] {
  const items = (typeof value === 'string' ? value.split(',') : [...value]).map((s) => s.trim());
  if (items.length === 1 && items[0] === 'all') return [...PRECOMPUTABLE_ORDERINGS];
  for (const item of items) {
    if (!PRECOMPUTABLE_ORDERINGS.includes(item)) {
      throw new CitiesApiError(
        `invalid ordering "${shortText(item)}": use all, or a list of default, name_en, -name_en, ... (the 16 name_* fields, - for descending)`,
        2,
      );
    }
  }
  if (!items.length)
    throw new CitiesApiError('no orderings given: expected all, or a list such as default,name_en,-name_en', 2);
  return PRECOMPUTABLE_ORDERINGS.filter((key) => items.includes(key));
}

export function parseCompression(value: string): Compression {
  if (!(COMPRESSIONS as readonly string[]).includes(value))
    throw new CitiesApiError(`invalid compression "${shortText(String(value))}": use ${COMPRESSIONS.join(', ')}`, 2);
  return value as Compression;
}

export function parseCollation(value: string): Collation {
  if (!isCollation(value))
    throw new CitiesApiError(`invalid collation "${shortText(String(value))}": use locale or codepoint`, 2);
  return value;
}

/** `--max-files`: a positive integer. */
export function parseMaxFiles(value: string | number): number {
  const text = String(value);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new CitiesApiError(
      `invalid ${optionNamed('maxFiles')} "${shortText(text)}": expected a positive integer such as 1000000`,
      2,
    );
  }
  return Number(text);
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12 };

/** `--min-free`: a size in bytes, or with a unit (500MB, 2GB: powers of 1000, as the build prints sizes). */
export function parseMinFree(value: string | number): number {
  const text = String(value).trim();
  const match = /^(\d+(?:\.\d+)?)\s*([kmgt]?b)?$/i.exec(text);
  const bytes = match ? Math.round(Number(match[1]) * SIZE_UNITS[(match[2] ?? '').toLowerCase()]!) : NaN;
  if (!Number.isSafeInteger(bytes))
    throw new CitiesApiError(`invalid ${optionNamed('minFree')} "${text}": expected a size such as 500MB, 2GB or 0`, 2);
  return bytes;
}
