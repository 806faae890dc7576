import { concatBytes, utf8, type Bytes } from './bytes.js';
import { detailJson, envelopeJson, jsonString } from './json-text.js';
import { CitiesApiError } from './errors.js';
import { orderingKey, parseOrdering, type Ordering } from './ordering.js';
import { pageSizeOf, paginate, type PageSlice } from './paginate.js';
import type { CityStorage } from './page-assembly.js';
import { lastValue, paramPlace, quotePlus, type QueryPair } from './query-string.js';
import { ROUTES } from './route-table.js';

const { param } = ROUTES;
/** The page parameter's field up to its value, as withParam() writes it. */
const PAGE_KEY = `${quotePlus(param.page)}=`;

export interface ListingAnswer {
  readonly status: 200 | 404;
  /**
   * The answer's UTF-8 JSON, byte for byte what the reference sends, as consecutive parts: one
   * buffer for most pages, several for large ones (so a page is never copied whole to be sent).
   * It can be iterated again. Write the parts in order (`for (const part of body) res.write(part)`),
   * or join them: `bodyBytes(body)` is the whole answer as one Uint8Array,
   * `JSON.parse(new TextDecoder().decode(bodyBytes(body)))` the page as an object.
   */
  readonly body: Iterable<Uint8Array>;
}

export const INVALID_PAGE = utf8(detailJson('Invalid page.'));

/** An answer's bytes (ListingAnswer's `body`) as one Uint8Array. */
export function bodyBytes(body: Iterable<Uint8Array>): Uint8Array {
  return concatBytes([...body]);
}

/** What answering needs of a dataset: its size, the positions of a page, a city's bytes. */
export interface PageIndex {
  readonly count: number;
  positions(ordering: Ordering, start: number, end: number): Uint32Array;
  json(position: number): Bytes;
  /** Where the cities' bytes lie, when the index holds them so: a page is then copied without a view of each (json() is not called). */
  readonly storage?: CityStorage;
  /** Null when answerListing() of these pairs is quick, else a promise doing the long part in steps, `pause()` between them (CityIndex). */
  prepare?(pairs: readonly QueryPair[], pause: () => Promise<void>): Promise<unknown> | null;
  /** Drops the orders it composed and kept for orderings asked so far (serve's warm-up's, before clients; CityIndex). */
  forget?(): void;
}

/**
 * THE page function: the answer of the endpoint (on `baseUrl`) for decoded query pairs.
 * The static build, the live server and the edge all call it, so their bytes cannot drift.
 */
export function answerListing(
  index: PageIndex,
  pairs: readonly QueryPair[],
  baseUrl: string,
  /**
   * The caller sends the body at once and reads it no more: an ordinary page may then be a view of
   * the memory it was assembled in (PageMemory.lend), valid until the next page is answered here.
   */
  sentAtOnce = false,
): ListingAnswer {
  const frame = listingFrame(index.count, pairs, baseUrl);
  if (!frame) return { status: 404, body: [INVALID_PAGE] };
  const { start, end } = frame.page.slice;
  const positions = index.positions(frame.page.ordering, start, end);
  return {
    status: 200,
    body: envelopeJson(
      index.count,
      frame.next,
      frame.previous,
      end - start,
      index.storage ? { positions, storage: index.storage, lent: sentAtOnce } : (i) => index.json(positions[i]!),
    ),
  };
}

/** A page's place and its envelope's links (JSON literals), or null for 404 "Invalid page.": what answerListing and a streamed answer share. */
export function listingFrame(
  count: number,
  pairs: readonly QueryPair[],
  baseUrl: string,
): { readonly page: NonNullable<ReturnType<typeof pageOf>>; readonly next: string; readonly previous: string } | null {
  const page = pageOf(count, pairs);
  if (!page) return null;
  const { slice } = page;
  // The two links differ in the page number only: written around it, the rest made once.
  const { before, after } = paramPlace(pairs, param.page);
  const open = `${listingQueryJson(baseUrl)}${before ? `${before}&` : ''}${PAGE_KEY}`;
  const close = after ? `&${after}"` : '"';
  const link = (page: number) => `${open}${page}${close}`;
  const next = slice.number < slice.pages ? link(slice.number + 1) : 'null';
  const first = () => listingUrlJson(baseUrl, before && after ? `${before}&${after}` : before || after);
  const previous = slice.number > 2 ? link(slice.number - 1) : slice.number === 2 ? first() : 'null';
  return { page, next, previous };
}

/**
 * A PageIndex holding only the cities of one page (`city(i)`: the page's i-th), for answerListing
 * of that very page (an edge function's, a build's pages read back): asked for another, it throws.
 */
export function onePageIndex(count: number, page: ReturnType<typeof pageOf>, city: (i: number) => Bytes): PageIndex {
  const key = page && orderingKey(page.ordering);
  const positions = new Uint32Array(page ? page.slice.end - page.slice.start : 0).map((_, i) => i);
  return {
    count,
    positions: (ordering, start, end) =>
      page && start === page.slice.start && end === page.slice.end && orderingKey(ordering) === key
        ? positions
        : otherPage(),
    json: (i) => (i < positions.length ? city(i) : otherPage()),
  };
}

function otherPage(): never {
  throw new CitiesApiError('internal error: a page was asked of an index that holds another page');
}

/** Which cities a query asks for: its ordering and page slice, or null for 404 "Invalid page.". */
export function pageOf(
  count: number,
  pairs: readonly QueryPair[],
): { readonly ordering: Ordering; readonly slice: PageSlice } | null {
  const slice = paginate(count, pageSizeOf(lastValue(pairs, param.pageSize)), lastValue(pairs, param.page));
  return slice && { ordering: parseOrdering(lastValue(pairs, param.ordering)), slice };
}

/** The endpoint's absolute URL on `baseUrl`, with a query string when there is one. */
export function listingUrl(baseUrl: string, query: string): string {
  return `${baseUrl}${ROUTES.endpoint}${query ? `?${query}` : ''}`;
}

// The last base URL and its JSON literal without the closing quote (escaped once, not per link), then with `?` too.
let linkBase: string | undefined;
let linkBaseJson = '';
let linkQueryJson = '';

/**
 * listingUrl() as a JSON string literal. A query made by paramSetter is percent-encoded
 * (letters, digits, `_.-~%+=&`): nothing in it needs escaping, so only the base is escaped.
 */
export function listingUrlJson(baseUrl: string, query: string): string {
  if (baseUrl !== linkBase) linkBaseOf(baseUrl);
  return query ? `${linkQueryJson}${query}"` : `${linkBaseJson}"`;
}

/** listingUrlJson() up to the query: the opening quote, the endpoint's URL and `?`. */
function listingQueryJson(baseUrl: string): string {
  if (baseUrl !== linkBase) linkBaseOf(baseUrl);
  return linkQueryJson;
}

function linkBaseOf(baseUrl: string): void {
  linkBase = baseUrl;
  linkBaseJson = jsonString(listingUrl(baseUrl, '')).slice(0, -1);
  linkQueryJson = `${linkBaseJson}?`;
}
