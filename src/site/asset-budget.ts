import { CitiesApiError } from '../core/errors.js';
import { DEFAULT_PAGE_SIZE, pageCount } from '../core/paginate.js';
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

export interface AssetLimits {
  readonly files: number;
  readonly fileBytes: number;
}

export const CLOUDFLARE_FREE: AssetLimits = { files: 20_000, fileBytes: 25 * 1024 * 1024 };

export const HOST_LIMITS: Readonly<Record<Host, AssetLimits>> = { cloudflare: CLOUDFLARE_FREE };

/**
 * The most pages from the start of each list a site for `host` holds within its file budget
 * (counting the edge data at most as many files as `cityBytes` of cities make), or undefined when
 * every page fits.
 */
export function firstPagesFor(host: Host, shape: Omit<Sized, 'firstPages'>, cityBytes: number): number | undefined {
  const { files } = HOST_LIMITS[host];
  const fits = (firstPages: number | undefined) => countSiteFiles({ ...shape, host, firstPages }, cityBytes) <= files;
  if (fits(undefined)) return undefined;
  if (!fits(0))
    throw new CitiesApiError(
      `a site for ${host} holds at most ${files.toLocaleString('en')} files, and the edge data of ${shape.count.toLocaleString('en')} cities with the last page of each of its lists take ${countSiteFiles({ ...shape, host, firstPages: 0 }, cityBytes).toLocaleString('en')}: build with fewer --orderings or --page-sizes. Nothing was written.`,
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
