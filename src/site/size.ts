import { optionNamed } from '../core/errors.js';
import { PRECOMPUTABLE_ORDERINGS } from '../core/ordering.js';
import { DEFAULT_PAGE_SIZE, pageCount } from '../core/paginate.js';
import { ROUTES } from '../core/route-table.js';
import { edgeBytes, edgeFileCount } from './edge-files.js';
import { siteExtras } from './extras.js';
import { holdsEveryCityPage } from './layout.js';
import type { Compression, SiteSpec } from './spec.js';

// How big a site gets before it is built: files and bytes grow with orderings × page sizes ×
// cities, so the build can say so up front and refuse what would swamp a disk or a host.

export const DEFAULT_MAX_FILES = 1_000_000;
/** Files per page: the page, and its `.gz` and `.br` when compressed. */
const filesPerPage = (compression: Compression) => (compression === 'none' ? 1 : 3);

/** Files besides the pages of a site for any host (the route table's extras: manifest, dataset, host configs, ...). */
export const OTHER_FILES = Object.keys(ROUTES.extras).length;

/**
 * What decides a site's size (its live URL: whether it holds the CloudFront Function, extras.ts).
 * `pagesOnly`: its pages alone, without the extras and the data (the share of an old site a build can
 * reuse), and of the data what `reusedData` names (the same dataset: its file; built alike, the edge data).
 */
export type Sized = Pick<
  SiteSpec,
  'count' | 'pageSizes' | 'orderings' | 'compression' | 'host' | 'mount' | 'firstPages' | 'edgeFiles'
> &
  Partial<Pick<SiteSpec, 'liveUrl'>> & { readonly pagesOnly?: boolean; readonly reusedData?: ReusedData };

/** The data files a rebuild of the same dataset reuses: its file, and the edge data where it is cut alike. */
export type ReusedData = 'dataset' | 'dataset and edge';

export interface SiteSize {
  readonly pages: number;
  readonly files: number;
  /** Estimated bytes of the pages, and of their `.gz`/`.br` siblings. */
  readonly jsonBytes: number;
  readonly compressedBytes: number;
  /** Estimated bytes of the dataset file and the edge data (chunks of the cities, rank files). */
  readonly dataBytes: number;
}

/** The page sizes of a list: the default one, then each precomputed size. */
const listSizes = (pageSizes: readonly number[]) => [DEFAULT_PAGE_SIZE, ...pageSizes];

/** Pages of one ordering: each list's first pages (every page unless `firstPages`), its `last`, and all cities where the site holds that page. */
function pagesPerOrdering(site: Pick<Sized, 'count' | 'pageSizes' | 'firstPages' | 'host'>): number {
  const first = site.firstPages ?? Infinity;
  return listSizes(site.pageSizes).reduce(
    (n, size) => n + Math.min(pageCount(site.count, size), first) + 1,
    holdsEveryCityPage(site) ? 1 : 0,
  );
}

/** Files of a site whatever it precomputes: the extras, and the edge data (as counted for a host, else at most, `cityBytes` when known). */
const fixedFiles = (
  site: Pick<Sized, 'count' | 'host' | 'mount' | 'edgeFiles' | 'liveUrl' | 'pagesOnly' | 'reusedData'>,
  cityBytes?: number,
) => {
  const edge = site.edgeFiles ?? edgeFileCount(site.count, cityBytes);
  if (!site.pagesOnly) return siteExtras(site).length + edge;
  return site.reusedData ? 1 + (site.reusedData === 'dataset' ? 0 : edge) : 0;
};

export function countSiteFiles(site: Sized, cityBytes?: number): number {
  return pagesPerOrdering(site) * site.orderings.length * filesPerPage(site.compression) + fixedFiles(site, cityBytes);
}

/**
 * The site's size from the dataset's serialized size (every page size and `all` hold each city
 * once) and the compression ratio of sample pages (`.gz` + `.br` bytes per JSON byte).
 */
export function estimateSiteSize(
  site: Sized,
  cityBytes: number,
  baseUrlLength: number,
  compressedRatio: number,
): SiteSize {
  const orderings = site.orderings.length;
  const pages = pagesPerOrdering(site) * orderings;
  const perCity = site.count ? cityBytes / site.count + 1 : 0;
  const envelope = 2 * (baseUrlLength + 60) + 40;
  // Cities on the pages of one ordering: the page of all (where held), each list's first pages, its last page.
  const first = site.firstPages ?? Infinity;
  const listed = listSizes(site.pageSizes).reduce(
    (n, size) => n + Math.min(site.count, first * size) + Math.min(size, site.count),
    holdsEveryCityPage(site) ? site.count : 0,
  );
  const jsonBytes = Math.round(pages * envelope + perCity * listed * orderings);
  const withData = !site.pagesOnly || !!site.reusedData;
  const withEdge = !site.pagesOnly || site.reusedData === 'dataset and edge';
  const dataBytes = Math.round(
    site.count && withData ? perCity * site.count + (withEdge ? edgeBytes(site.count, cityBytes) : 0) : 0,
  );
  return {
    pages,
    files: countSiteFiles(site, cityBytes),
    jsonBytes,
    compressedBytes: site.compression !== 'none' ? Math.round(jsonBytes * compressedRatio) : 0,
    dataBytes,
  };
}

/** Slack on the estimated bytes (measured within 5 % at 140k cities; compression varies more). */
export const ESTIMATE_SLACK = 1.1;

/**
 * Bytes files take on disk: their bytes (+ ESTIMATE_SLACK) and three quarters of a block each,
 * lost in their last block (measured: 3.0 KB a file on 4 KB blocks at 30k cities, where most
 * files are `.gz`/`.br` of 1-2 KB).
 */
export function bytesOnDisk(
  size: Pick<SiteSize, 'files' | 'jsonBytes' | 'compressedBytes'> & Partial<Pick<SiteSize, 'dataBytes'>>,
  blockSize: number,
): number {
  return Math.round(
    (size.jsonBytes + size.compressedBytes + (size.dataBytes ?? 0)) * ESTIMATE_SLACK + size.files * blockSize * 0.75,
  );
}

/** Why a site is refused above `maxFiles`, and which orderings or page sizes to drop so it fits. */
export function tooManyFilesAdvice(shape: Sized, maxFiles: number): string {
  const files = countSiteFiles(shape);
  const ways: string[] = [];
  const perOrdering = countSiteFiles({ ...shape, orderings: shape.orderings.slice(0, 1) }) - fixedFiles(shape);
  const orderingsThatFit = Math.floor((maxFiles - fixedFiles(shape)) / perOrdering);
  if (orderingsThatFit >= 1 && orderingsThatFit < shape.orderings.length) {
    ways.push(
      `precompute at most ${orderingsThatFit} of the ${shape.orderings.length} orderings (e.g. ${optionNamed('orderings')} ${exampleOrderings(orderingsThatFit)}); the others are answered live`,
    );
  }
  const sizes = [...shape.pageSizes];
  while (sizes.length > 1 && countSiteFiles({ ...shape, pageSizes: sizes }) > maxFiles) sizes.shift();
  if (sizes.length < shape.pageSizes.length && countSiteFiles({ ...shape, pageSizes: sizes }) <= maxFiles) {
    ways.push(
      `drop the smallest page sizes: ${optionNamed('pageSizes')} ${sizes.join(',')} (${countSiteFiles({ ...shape, pageSizes: sizes }).toLocaleString('en')} files)`,
    );
  }
  if (shape.compression !== 'none' && countSiteFiles({ ...shape, compression: 'none' }) <= maxFiles)
    ways.push(`${optionNamed('compression')} none (one file per page instead of three)`);
  if (!shape.host)
    ways.push(
      `${optionNamed('builtFor')} cloudflare, for Cloudflare Workers (each list's first pages within its 20,000 asset files; the Worker computes the others)`,
    );
  ways.push(`raise ${optionNamed('maxFiles')} to ${files.toLocaleString('en')} if the disk and the host can take it`);
  return `the site would hold ${files.toLocaleString('en')} files, above ${optionNamed('maxFiles')} ${maxFiles.toLocaleString('en')}. To fit: ${ways.join('; or ')}. Nothing was written.`;
}

function exampleOrderings(n: number): string {
  const first = [ROUTES.absent, 'name_en', `${ROUTES.descending}name_en`];
  const picks = [...first, ...PRECOMPUTABLE_ORDERINGS.filter((key) => !first.includes(key))];
  return picks.slice(0, n).join(',');
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value >= 100 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}
