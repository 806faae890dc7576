import { concatBytes, utf8, type Bytes } from './bytes.js';
import type { CityIndex } from './city-index.js';
import { detailJson, envelopeJson } from './json-text.js';
import { parseOrdering } from './ordering.js';
import { pageSizeFrom, paginate } from './paginate.js';
import { lastValue, withParam, type QueryPair } from './query-string.js';
import { ROUTES } from './route-table.js';

const { param } = ROUTES;

export interface ListingAnswer {
  readonly status: 200 | 404;
  /** UTF-8 JSON, byte for byte what the reference sends: one buffer, or (re-iterable) consecutive parts for large pages. */
  readonly body: Iterable<Bytes>;
}

export const INVALID_PAGE = utf8(detailJson('Invalid page.'));

/** An answer's bytes as one buffer. */
export function bodyBytes(body: Iterable<Bytes>): Bytes {
  return concatBytes([...body]);
}

/**
 * THE page function: the answer of the endpoint (on `baseUrl`) for decoded query pairs.
 * The static build and the live server both call it, so their bytes cannot drift.
 */
export function answerListing(index: CityIndex, pairs: readonly QueryPair[], baseUrl: string): ListingAnswer {
  const pageSize = pageSizeFrom(lastValue(pairs, param.pageSize));
  const slice = paginate(index.count, pageSize, lastValue(pairs, param.page));
  if (!slice) return { status: 404, body: [INVALID_PAGE] };
  const positions = index.positions(parseOrdering(lastValue(pairs, param.ordering)), slice.start, slice.end);
  const link = (page: number | null) => listingUrl(baseUrl, withParam(pairs, param.page, page === null ? null : String(page)));
  const next = slice.number < slice.pages ? link(slice.number + 1) : null;
  const previous = slice.number > 1 ? link(slice.number === 2 ? null : slice.number - 1) : null;
  return { status: 200, body: envelopeJson(index.count, next, previous, slice.end - slice.start, (i) => index.json(positions[i]!)) };
}

/** The endpoint's absolute URL on `baseUrl`, with a query string when there is one. */
export function listingUrl(baseUrl: string, query: string): string {
  return `${baseUrl}${ROUTES.endpoint}${query ? `?${query}` : ''}`;
}
