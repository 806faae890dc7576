import type { ReusedData, Sized } from './size.js';
import type { SiteSpec } from './spec.js';

// The share of an old site a rebuild can reuse (hard links cost no space), as the free-space check counts it.

/** What decides which of a site's files another build can reuse. */
export type Reusable = Sized &
  Pick<SiteSpec, 'baseUrl' | 'collation' | 'defaultPageSize'> &
  Partial<Pick<SiteSpec, 'fineBlockBytes'>>;

/**
 * At most what a new site can reuse of an old one (hard links cost no space): the pages both
 * precompute (same base URL and collation, the orderings and page sizes of both, the cities of the
 * smaller, their `.gz`/`.br` when made at the same level), as if their bytes were all unchanged. Null when nothing can be.
 * The dataset file and the edge data change with any city: reused only from the same dataset
 * (`sameDataset`), the edge data where it is cut alike (the same collation and fine blocks); a host's
 * extras are a few small files, never counted.
 */
export function reusableShape(old: Reusable, site: Reusable, sameDataset = false): Sized | null {
  const reusedData: ReusedData | undefined = !sameDataset
    ? undefined
    : old.collation === site.collation && old.fineBlockBytes === site.fineBlockBytes
      ? 'dataset and edge'
      : 'dataset';
  const edgeFiles = reusedData && site.edgeFiles !== undefined ? { edgeFiles: site.edgeFiles } : {};
  // No page in common: the data files alone.
  const dataOnly: Sized | null = reusedData
    ? {
        count: site.count,
        pageSizes: [],
        orderings: [],
        compression: 'none',
        mount: site.mount,
        pagesOnly: true,
        reusedData,
        ...edgeFiles,
      }
    : null;
  if (old.baseUrl !== site.baseUrl || old.collation !== site.collation || old.defaultPageSize !== site.defaultPageSize)
    return dataOnly;
  const orderings = site.orderings.filter((key) => old.orderings.includes(key));
  if (!orderings.length) return dataOnly;
  const firstPages = Math.min(old.firstPages ?? Infinity, site.firstPages ?? Infinity);
  return {
    count: Math.min(old.count, site.count),
    pageSizes: site.pageSizes.filter((size) => old.pageSizes.includes(size)),
    orderings,
    compression: old.compression === site.compression ? site.compression : 'none',
    mount: site.mount,
    // The page of all cities where both hold it; each list's first pages that both hold.
    ...(old.host || site.host ? { host: old.host ?? site.host } : {}),
    ...(firstPages < Infinity ? { firstPages } : {}),
    pagesOnly: true,
    ...(reusedData && { reusedData, ...edgeFiles }),
  };
}
