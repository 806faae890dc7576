import type { CityIndex } from '../core/city-index.js';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import { NAME_FIELDS } from '../core/fields.js';
import { DEFAULT_PAGE_SIZE, pageCount } from '../core/paginate.js';
import { compactLengths } from './compact-cities.js';
import { blockFileCount, distinctLayouts, hasLargeGroup } from './edge-cuts.js';
import { RANK_FILES } from './edge-files.js';
import { countSiteFiles, type Sized } from './size.js';
import type { Host } from './spec.js';

// What a site built for one host (`--for`) may hold: Cloudflare's Workers Free plan takes at most
// 20,000 static asset files per Worker version and 25 MiB a file
// (https://developers.cloudflare.com/workers/platform/limits/#static-assets). A default site of
// 140,000 cities is 3.76 million files; one built for Cloudflare holds the edge data (from which
// the Worker computes any page) and, within what is left of the budget, the first pages of every
// list (an ordering at a page size): a listing app opens a list at its first page and reaches the
// next ones by its `next` link, one at a time, so every list's first pages are what clients ask
// for most, and a deep page costs one computed answer (a few ms) instead of a file.
//
// Cloudflare's Worker reads the edge files through its assets binding, which sends whole files
// (it ignores Range): a page of a multi-field ordering whose first field has a large tie group
// reads every block its cities lie in, whole. The budget goes first to cutting such groups into
// fine blocks (site/edge-cuts.ts), as small as FINE_BLOCKS allows while every list keeps its
// first page, then to first pages: on Cloudflare the Worker runs first for every request anyway,
// and a page of one layout that no file holds reads one or two blocks, so a first page saves one
// read of a block and a fraction of a millisecond of CPU, which the Cache API saves as well for a
// repeated query (on a zone's domain).

export interface AssetLimits {
  readonly files: number;
  readonly fileBytes: number;
}

export const CLOUDFLARE_FREE: AssetLimits = { files: 20_000, fileBytes: 25 * 1024 * 1024 };

export const HOST_LIMITS: Readonly<Record<Host, AssetLimits>> = { cloudflare: CLOUDFLARE_FREE };

/**
 * Sizes tried for the fine blocks of large tie groups, smallest first, in bytes of their compact
 * cities (compact-cities.ts: 120-250 bytes a city where names repeat, against 500 as JSON): 4 KB
 * holds ~20-30 cities (a page of 10 of them scattered reads ~40 KB), and keeps a page that runs
 * through such a group in one ordering to ~1 block fetched per 20-30 of its cities.
 */
export const FINE_BLOCKS = [
  4_000, 5_000, 6_000, 8_000, 10_000, 12_000, 16_000, 20_000, 24_000, 32_000, 40_000, 48_000, 64_000, 80_000, 96_000,
  120_000, 160_000,
];

/** What a site for a host holds besides its pages: its edge files, its fine blocks' size if any, and its first pages. */
export interface HostBudget {
  readonly firstPages: number | undefined;
  readonly edgeFiles: number;
  readonly fineBlockBytes: number | undefined;
}

/**
 * The site for `host` of the dataset `index`: its edge data counted as written (fields of one
 * order share their layout), its large tie groups in the smallest fine blocks that leave every
 * list its first page within the file budget, then as many first pages as fit.
 */
export function hostBudget(host: Host, shape: Omit<Sized, 'firstPages' | 'edgeFiles'>, index: CityIndex): HostBudget {
  // Every field ranked once, kept for the build's edge files and pages: each layout's groups known.
  for (const field of NAME_FIELDS) index.ranks(field);
  const layouts = distinctLayouts(index);
  const lengths = index.table.jsonLengths();
  // No group large enough: nothing is cut finer.
  const large = layouts.some((layout) => hasLargeGroup(layout, lengths));
  // Fine blocks hold their cities compact (edge-files.ts): counted as written.
  const compact = large ? compactLengths(index.count, (p) => index.json(p)) : lengths;
  const edgeFiles = (fine?: number) => 1 + RANK_FILES + blockFileCount(layouts, lengths, fine, compact);
  const coarse = edgeFiles();
  const { files } = HOST_LIMITS[host];
  const lists = Math.min(1, pageCount(shape.count, Math.min(DEFAULT_PAGE_SIZE, ...shape.pageSizes)));
  for (const fine of large ? FINE_BLOCKS : []) {
    const edge = edgeFiles(fine);
    if (countSiteFiles({ ...shape, host, firstPages: lists, edgeFiles: edge }) <= files)
      return {
        fineBlockBytes: fine,
        edgeFiles: edge,
        firstPages: firstPagesFor(host, { ...shape, edgeFiles: edge }, 0),
      };
  }
  return {
    fineBlockBytes: undefined,
    edgeFiles: coarse,
    firstPages: firstPagesFor(host, { ...shape, edgeFiles: coarse }, 0),
  };
}

/**
 * The most pages from the start of each list a site for `host` holds within its file budget
 * (counting its edge files as `shape.edgeFiles` says, else at most as many as `cityBytes` of
 * cities make), or undefined when every page fits.
 */
export function firstPagesFor(host: Host, shape: Omit<Sized, 'firstPages'>, cityBytes: number): number | undefined {
  const { files } = HOST_LIMITS[host];
  const fits = (firstPages: number | undefined) => countSiteFiles({ ...shape, host, firstPages }, cityBytes) <= files;
  if (fits(undefined)) return undefined;
  if (!fits(0))
    throw new CitiesApiError(
      `a site for ${host} holds at most ${files.toLocaleString('en')} files, and the edge data of ${shape.count.toLocaleString('en')} cities with the last page of each of its lists take ${countSiteFiles({ ...shape, host, firstPages: 0 }, cityBytes).toLocaleString('en')}: build with fewer ${optionNamed('orderings')} or ${optionNamed('pageSizes')}. Nothing was written.`,
      2,
    );
  // Binary search: the largest count of first pages that fits (0 fits, every page does not).
  let low = 0;
  let high = pageCount(shape.count, Math.min(DEFAULT_PAGE_SIZE, ...shape.pageSizes));
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}
