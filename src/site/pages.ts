import type { Bytes } from '../core/bytes.js';
import { NAME_FIELDS } from '../core/fields.js';
import { orderingKey, singleOrderings, type Ordering } from '../core/ordering.js';
import { answerListing, type PageIndex } from '../core/page.js';
import { DEFAULT_PAGE_SIZE, pageCount } from '../core/paginate.js';
import type { QueryPair } from '../core/query-string.js';
import { ROUTES } from '../core/route-table.js';
import { allPath, holdsEveryCityPage, pagePath } from './layout.js';
import type { SiteSpec } from './spec.js';

const { absent, lastPage, param } = ROUTES;

export interface SiteFile {
  readonly path: string;
  /** One buffer, or consecutive parts for a large page. */
  readonly body: Iterable<Bytes>;
}

type PageSettings = Pick<SiteSpec, 'baseUrl' | 'pageSizes' | 'orderings' | 'firstPages' | 'host'>;

/** The site's orderings (keys), in a stable order, each with the query pairs that ask for it. */
export function siteOrderings(
  settings: Pick<SiteSpec, 'orderings'>,
): { readonly ordering: Ordering; readonly key: string; readonly pairs: QueryPair[] }[] {
  return singleOrderings(NAME_FIELDS)
    .map((ordering) => ({
      ordering,
      key: orderingKey(ordering),
      pairs: ordering.length ? [[param.ordering, orderingKey(ordering)] as QueryPair] : [],
    }))
    .filter(({ key }) => settings.orderings.includes(key));
}

/** Each ordering's page of every city (any page size from the count up answers it), with its ordering's key, where the site holds them. */
export function* allPageFiles(
  index: PageIndex,
  settings: PageSettings,
): Generator<SiteFile & { readonly ordering: string }> {
  if (!holdsEveryCityPage(settings)) return;
  for (const { key, pairs } of siteOrderings(settings)) {
    const body = answerListing(
      index,
      [...pairs, [param.pageSize, String(Math.max(1, index.count))]],
      settings.baseUrl,
    ).body;
    yield { path: allPath(key, index.count), body, ordering: key };
  }
}

/**
 * Every other precomputed page (each list's first `firstPages`, or all, and its last), one at a time (the site is never held whole), in a stable order;
 * `indexFor` gives the index each page is answered from (the whole dataset's, or one holding that page).
 */
export function* pageFiles(
  count: number,
  indexFor: (pairs: readonly QueryPair[]) => PageIndex,
  settings: PageSettings,
): Generator<SiteFile> {
  const sizes: (number | typeof absent)[] = [absent, ...settings.pageSizes];
  for (const { key, pairs: base } of siteOrderings(settings)) {
    const answer = (more: QueryPair[]) => {
      const pairs = [...base, ...more];
      return answerListing(indexFor(pairs), pairs, settings.baseUrl).body;
    };
    for (const size of sizes) {
      const sizePairs: QueryPair[] = size === absent ? [] : [[param.pageSize, String(size)]];
      const pages = Math.min(
        pageCount(count, size === absent ? DEFAULT_PAGE_SIZE : size),
        settings.firstPages ?? Infinity,
      );
      for (let page = 1; page <= pages; page++) {
        yield {
          path: pagePath(key, size, page),
          body: answer(page === 1 ? sizePairs : [...sizePairs, [param.page, String(page)]]),
        };
      }
      yield { path: pagePath(key, size, lastPage), body: answer([...sizePairs, [param.page, lastPage]]) };
    }
  }
}
