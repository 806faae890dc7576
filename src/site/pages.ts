import type { Bytes } from '../core/bytes.js';
import type { CityIndex } from '../core/city-index.js';
import { NAME_FIELDS } from '../core/fields.js';
import { orderingKey, singleOrderings } from '../core/ordering.js';
import { answerListing } from '../core/page.js';
import { DEFAULT_PAGE_SIZE, pageCount } from '../core/paginate.js';
import type { QueryPair } from '../core/query-string.js';
import { ROUTES } from '../core/route-table.js';
import { allPath, pagePath } from './layout.js';
import type { SiteSpec } from './spec.js';

const { absent, lastPage, param } = ROUTES;

export interface SiteFile {
  readonly path: string;
  /** One buffer, or consecutive parts for a large page. */
  readonly body: Iterable<Bytes>;
}

/** Every precomputed page, one at a time (the site is never held whole), in a stable order. */
export function* pageFiles(index: CityIndex, settings: Pick<SiteSpec, 'baseUrl' | 'pageSizes' | 'orderings'>): Generator<SiteFile> {
  const sizes: (number | typeof absent)[] = [absent, ...settings.pageSizes];
  for (const ordering of singleOrderings(NAME_FIELDS)) {
    const key = orderingKey(ordering);
    if (!settings.orderings.includes(key)) continue;
    const base: QueryPair[] = ordering.length ? [[param.ordering, key]] : [];
    const answer = (pairs: QueryPair[]) => answerListing(index, [...base, ...pairs], settings.baseUrl).body;
    for (const size of sizes) {
      const sizePairs: QueryPair[] = size === absent ? [] : [[param.pageSize, String(size)]];
      const pages = pageCount(index.count, size === absent ? DEFAULT_PAGE_SIZE : size);
      for (let page = 1; page <= pages; page++) {
        yield { path: pagePath(key, size, page), body: answer(page === 1 ? sizePairs : [...sizePairs, [param.page, String(page)]]) };
      }
      yield { path: pagePath(key, size, lastPage), body: answer([...sizePairs, [param.page, lastPage]]) };
    }
    yield { path: allPath(key, index.count), body: answer([[param.pageSize, String(Math.max(1, index.count))]]) };
  }
}
