import type { CityIndex } from '../core/city-index.js';
import { NAME_FIELDS } from '../core/fields.js';
import { orderingKey, singleOrderings } from '../core/ordering.js';
import { answerListing } from '../core/page.js';
import { DEFAULT_PAGE_SIZE, pageCount } from '../core/paginate.js';
import type { QueryPair } from '../core/query-string.js';
import { allPath, DEFAULT_SEGMENT, pagePath } from './layout.js';

export interface SiteFile {
  readonly path: string;
  /** One buffer, or consecutive parts for a large page. */
  readonly body: Iterable<Buffer>;
}

export interface PagesSettings {
  readonly baseUrl: string;
  readonly pageSizes: readonly number[];
  readonly orderings: readonly string[];
}

/** Every precomputed page, one at a time (the site is never held whole), in a stable order. */
export function* pageFiles(index: CityIndex, settings: PagesSettings): Generator<SiteFile> {
  const sizes: (number | typeof DEFAULT_SEGMENT)[] = [DEFAULT_SEGMENT, ...settings.pageSizes];
  for (const ordering of singleOrderings(NAME_FIELDS)) {
    const key = orderingKey(ordering);
    if (!settings.orderings.includes(key)) continue;
    const base: QueryPair[] = ordering.length ? [['ordering', key]] : [];
    const answer = (pairs: QueryPair[]) => answerListing(index, [...base, ...pairs], settings.baseUrl).body;
    for (const size of sizes) {
      const sizePairs: QueryPair[] = size === DEFAULT_SEGMENT ? [] : [['page_size', String(size)]];
      const pages = pageCount(index.count, size === DEFAULT_SEGMENT ? DEFAULT_PAGE_SIZE : size);
      for (let page = 1; page <= pages; page++) {
        yield { path: pagePath(key, size, page), body: answer(page === 1 ? sizePairs : [...sizePairs, ['page', String(page)]]) };
      }
      yield { path: pagePath(key, size, 'last'), body: answer([...sizePairs, ['page', 'last']]) };
    }
    yield { path: allPath(key), body: answer([['page_size', String(Math.max(1, index.count))]]) };
  }
}
