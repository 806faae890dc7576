import type { CityIndex } from '../core/city-index.js';
import { CitiesApiError } from '../core/errors.js';
import { answerListing, bodyBytes } from '../core/page.js';
import { DEFAULT_PAGE_SIZE } from '../core/paginate.js';
import { ROUTES } from '../core/route-table.js';
import { countSiteFiles, DEFAULT_MAX_FILES, estimateSiteSize, tooManyFilesAdvice, type Sized } from '../site/size.js';
import type { CompressionLevel, SiteSettings, SiteSpec } from '../site/spec.js';
import { compressedRatio } from '../store/compression.js';
import type { BuildOptions } from './build-options.js';

// A build's size before it is written: files counted against --max-files, bytes estimated from
// the cities' JSON and a compression ratio sampled from first pages.

/** Refuses a site of more files than --max-files allows, with the advice of what to drop. */
export function checkMaxFiles(spec: SiteSpec, options: BuildOptions): void {
  const maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
  if (countSiteFiles(spec) > maxFiles) throw new CitiesApiError(tooManyFilesAdvice(spec, maxFiles), 2);
}

/** The size of a site (or of part of it: `of`) estimated from its cities' JSON bytes and the compression ratio. */
export function sizeOf(
  settings: SiteSettings,
  cities: number,
  cityBytes: number,
  ratio: number,
): (of: Sized) => ReturnType<typeof estimateSiteSize> {
  return (of) => estimateSiteSize(of, (cityBytes * of.count) / Math.max(1, cities), settings.baseUrl.length, ratio);
}

/** The compression ratio of the first page at each page size, weighted alike (each size holds every city once). */
export function sampleCompressedRatio(index: CityIndex, settings: SiteSettings, level: CompressionLevel): number {
  const sizes = [DEFAULT_PAGE_SIZE, ...settings.pageSizes].map((size) => Math.min(size, 1000));
  // Each size's page compressed once: the default size is most often one of the site's (brotli's best level
  // takes about 2 CPU-s a MB, and a build samples before it writes anything).
  const ratioOf = new Map(
    [...new Set(sizes)].map((size) => {
      const page = answerListing(index, [[ROUTES.param.pageSize, String(size)]], settings.baseUrl);
      return [size, compressedRatio(bodyBytes(page.body), level)];
    }),
  );
  const ratios = sizes.map((size) => ratioOf.get(size)!);
  return ratios.reduce((a, b) => a + b, 0) / ratios.length;
}
