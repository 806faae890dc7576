import { isNameField } from '../core/fields.js';
import { pageCount, DEFAULT_PAGE_SIZE } from '../core/paginate.js';
import type { QueryPair } from '../core/query-string.js';
import { fill, ROUTES } from '../core/route-table.js';
import type { SiteSpec } from './spec.js';

// Where each precomputed answer lives in a site (the route table's file templates), and which
// requests it answers: exactly some of ordering, page and page_size, each once, in canonical
// spellings. Anything else is answered live.

const { param, absent, lastPage, descending } = ROUTES;

/** What decides which files a site holds. */
export type Layout = Pick<SiteSpec, 'count' | 'pageSizes' | 'orderings' | 'firstPages' | 'host'>;

/**
 * Whether a site holds each ordering's page of every city (any page_size from the count up): not
 * one built for a host (`--for`), which writes nothing its host does not publish. Its edge
 * function streams that answer from the edge data, and `serve` computes it: on Cloudflare the page
 * is over the 25 MiB an asset may take from about 50,000 cities (68 MiB at 140,000), and below
 * that it is 33 of the 20,000 files and, at 20,000 cities, 344 MB of each deploy's upload for
 * answers the Worker computes anyway. A rule of the host, not of the size: the same at any count.
 */
export function holdsEveryCityPage(layout: Pick<Layout, 'host'>): boolean {
  return layout.host === undefined;
}

export function pagePath(ordering: string, pageSize: number | typeof absent, page: number | typeof lastPage): string {
  return fill(ROUTES.file.page, { ordering, page_size: pageSize, page });
}

export function allPath(ordering: string, count: number): string {
  return fill(ROUTES.file.all, { ordering, count });
}

/**
 * The most digits of a page_size a file answers. Up to this, any size >= count is Django's one
 * page (int() reads up to 4300 digits, and Django's float page count only drops to 0 from
 * count * 2^1075, about 10^323); larger sizes are answered live, exactly.
 */
export const ALL_PAGE_SIZE_DIGITS = 300;
/** The most digits of a page number a file answers. */
export const PAGE_DIGITS = 15;

const POSITIVE = /^[1-9][0-9]*$/;

interface FileQuery {
  readonly ordering: string;
  readonly size?: string | undefined;
  readonly page?: string | undefined;
}

/** The canonical parameters of a query a file can answer, or null when some parameter rules every file out. */
function fileQuery(pairs: readonly QueryPair[]): FileQuery | null {
  let ordering: string | undefined;
  let size: string | undefined;
  let page: string | undefined;
  // Any other name rules every file out, so a name given twice is one of these three, set already
  // (no Set made per request: a never-seen query comes here each time).
  for (const [name, value] of pairs) {
    if (name === param.ordering) {
      if (ordering !== undefined) return null;
      if (!isNameField(value.startsWith(descending) ? value.slice(descending.length) : value)) return null;
      ordering = value;
    } else if (name === param.pageSize) {
      if (size !== undefined) return null;
      size = value;
    } else if (name === param.page) {
      if (page !== undefined) return null;
      page = value;
    } else return null;
  }
  if (size !== undefined && (!POSITIVE.test(size) || size.length > ALL_PAGE_SIZE_DIGITS)) return null;
  if (page !== undefined && page !== lastPage && (!POSITIVE.test(page) || page.length > PAGE_DIGITS)) return null;
  return { ordering: ordering ?? absent, size, page };
}

const firstOrLast = (page: string | undefined) => page === undefined || page === '1' || page === lastPage;

/** Whether page_size (canonical digits) gives the one page of all cities. */
export function holdsAll(size: string, count: number): boolean {
  return BigInt(size) >= BigInt(count);
}

function pageKey({ ordering, size, page }: FileQuery): string {
  const number = page === undefined ? 1 : page === lastPage ? lastPage : Number(page);
  return pagePath(ordering, size === undefined ? absent : Number(size), number);
}

/** The site file holding the answer to a query, or null when the query must be answered live. */
export function staticPathFor(pairs: readonly QueryPair[], layout: Layout): string | null {
  const query = fileQuery(pairs);
  if (!query || !layout.orderings.includes(query.ordering)) return null;
  const { ordering, size, page } = query;
  if (size !== undefined && !layout.pageSizes.includes(Number(size))) {
    return firstOrLast(page) && holdsAll(size, layout.count) && holdsEveryCityPage(layout)
      ? allPath(ordering, layout.count)
      : null;
  }
  const pages = pageCount(layout.count, size === undefined ? DEFAULT_PAGE_SIZE : Number(size));
  if (!firstOrLast(page) && Number(page) > pages) return null;
  // A site of a list's first pages only: the others are answered live.
  if (page !== lastPage && Number(page ?? 1) > (layout.firstPages ?? Infinity)) return null;
  return pageKey(query);
}

/**
 * The file that holds a query's answer wherever a site holds it, knowing no setting and, but for
 * the all-cities rule (given `count`), nothing of the data: what a host config holding no such
 * fact maps a query to, leaving it to the file's existence, and the live side, to decide.
 */
export function fileKeyFor(pairs: readonly QueryPair[], count?: number): string | null {
  const query = fileQuery(pairs);
  if (!query) return null;
  if (count !== undefined && query.size !== undefined && firstOrLast(query.page) && holdsAll(query.size, count))
    return allPath(query.ordering, count);
  return pageKey(query);
}

/**
 * The query a request for a site file's path stands for, as the live side answers it when a host
 * that rewrote the query to that file asks it instead (a CloudFront origin failover, once a
 * rebuild removed the file): the request's own query when it maps to that very file, else the
 * file's canonical query. Null when the path is no file's, or the query another file's.
 */
export function queryForFile(path: string, pairs: readonly QueryPair[]): QueryPair[] | null {
  const key = path.slice(1);
  const file = parseFileKey(key);
  if (!file) return null;
  const count = 'count' in file ? file.count : undefined;
  if (pairs.length) return fileKeyFor(pairs, count) === key ? [...pairs] : null;
  const canonical: QueryPair[] = [];
  if (file.ordering !== absent) canonical.push([param.ordering, file.ordering]);
  if ('count' in file) canonical.push([param.pageSize, String(file.count)]);
  else {
    if (file.size !== absent) canonical.push([param.pageSize, file.size]);
    if (file.page !== '1') canonical.push([param.page, file.page]);
  }
  return fileKeyFor(canonical, count) === key ? canonical : null;
}

/** A file path's segments by the route table's templates: a page file's or an all-cities file's. */
function parseFileKey(
  key: string,
): { ordering: string; size: string; page: string } | { ordering: string; count: number } | null {
  const match = (template: string) => {
    const names: string[] = [];
    const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    const found = new RegExp(`^${pattern}$`).exec(key);
    return found ? Object.fromEntries(names.map((name, i) => [name, found[i + 1]!])) : null;
  };
  const all = match(ROUTES.file.all);
  if (all && /^(0|[1-9][0-9]*)$/.test(all.count!)) return { ordering: all.ordering!, count: Number(all.count) };
  const page = match(ROUTES.file.page);
  return page ? { ordering: page.ordering!, size: page.page_size!, page: page.page! } : null;
}

/**
 * Every directory of a site with this layout, parents before children: a build creates them all
 * before any file (on ext4 here, files written into directories made while writing took about
 * three times as long to create: scripts/bench-build.mjs).
 */
export function siteDirectories(layout: Layout): string[] {
  const files = [
    ...layout.orderings.flatMap((key) => [
      allPath(key, layout.count),
      ...[absent, ...layout.pageSizes].map((size) => pagePath(key, size, 1)),
    ]),
    fill(ROUTES.edge.ranks, { ordering: absent }),
    ...(layout.count ? [fill(ROUTES.edge.block, { layout: absent, block: 0 })] : []),
    ROUTES.edge.index,
    ...Object.values(ROUTES.extras),
  ];
  const dirs = new Set<string>();
  for (const file of files) {
    const parts = file.split('/').slice(0, -1);
    parts.forEach((_, i) => dirs.add(parts.slice(0, i + 1).join('/')));
  }
  return [...dirs];
}
