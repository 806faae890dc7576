import type { Bytes } from '../core/bytes.js';
import type { PartSource } from '../core/envelope-stream.js';
import type { Negotiation } from '../core/negotiate.js';
import type { PageIndex } from '../core/page.js';
import type { QueryPair } from '../core/query-string.js';
import { ROUTES } from '../core/route-table.js';
import type { SiteSpec } from '../site/spec.js';

// What routing takes and gives: the request, the site it answers from, the route decided.

export interface ApiRequest {
  readonly method: string;
  /** Path and query exactly as received (`/cities/?page=2`). */
  readonly target: string;
  readonly accept?: string | undefined;
  /** Present on a CORS preflight. */
  readonly preflightHeaders?: string | undefined;
  /** The server creates cities on POST (`--writable`): its browsable page shows the POST form. */
  readonly writable?: boolean | undefined;
  /** The request's If-None-Match field: a computed answer whose ETag it names is a 304. */
  readonly ifNoneMatch?: string | undefined;
}

/** What route() answers from: a site's spec, its dataset ready for answering, and whether its files may be used now. */
export interface SiteContext {
  readonly spec: SiteSpec;
  /** A CityIndex (the whole dataset), or what a chunked edge source prepares for one request (site/edge-source.ts indexFor). */
  readonly index: PageIndex;
  /** False while the site's files are being replaced: everything is then computed live. */
  readonly useFiles?: boolean;
  /** The data's tag (the edge index's): computed JSON answers then carry an ETag (site/answer-tag.ts). */
  readonly tag?: string | undefined;
}

/**
 * A SiteContext whose parts are fetched when a request needs them: an edge function reads the
 * spec once per isolate and, for a page it computes, only that page's share of the dataset
 * (edge-site.ts); a dataset held in memory gives its whole index every time (embedded-site.ts).
 */
export interface LazySiteContext {
  spec(): SiteSpec | Promise<SiteSpec>;
  index(pairs: readonly QueryPair[]): PageIndex | Promise<PageIndex>;
  /**
   * The compact JSON answer as it is read (an edge source's): a page of any size, never held whole,
   * its parts written into `parts`' arrays. Absent: assembled from index().
   */
  stream?(
    pairs: readonly QueryPair[],
    baseUrl: string,
    parts?: PartSource,
  ): Promise<{ status: number; body: AsyncIterable<Bytes>; tag?: string; count?: number }>;
  /** The data's tag, where the source names its data (an edge index's): computed JSON answers then carry an ETag. */
  tag?(): Promise<string>;
}

/** Header names and values of an answer (a plain record: the web `Headers` class is another thing). */
export type HeaderFields = Record<string, string>;

export interface StaticRoute {
  readonly kind: 'static';
  /** The site file holding the answer. */
  readonly file: string;
  readonly headers: HeaderFields;
}

export type Route =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers: HeaderFields;
      readonly body: Bytes | Iterable<Bytes>;
    }
  | StaticRoute
  | { readonly kind: 'create'; readonly headers: HeaderFields; readonly negotiation: Negotiation };

/** A GET or HEAD the page function answers: what is left of routing once the request is decoded (see decideRoute()). */
export interface ListingRoute {
  readonly kind: 'listing';
  readonly pairs: readonly QueryPair[];
  readonly negotiation: Negotiation;
}

/**
 * `headers` with `fields` added (or, where already there, replaced in place): a new object, as
 * `{ ...headers, ...fields }` would be. Not a spread: in Node 20's V8 an object spread and then
 * given a property more got a hidden class of its own each time, 3-10 us per answer (a tenth of
 * a never-seen query's CPU); Object.assign onto `{}` follows the transitions made once.
 */
export function withFields(headers: Readonly<HeaderFields>, fields: Readonly<HeaderFields>): HeaderFields {
  return Object.assign({}, headers, fields);
}

const { header, headers: API_HEADERS, contentType } = ROUTES;
/** Every answer of the endpoint in compact JSON, and every answer from a site file (with sirv's own). */
export const JSON_HEADERS: Readonly<HeaderFields> = withFields(API_HEADERS, { [header.contentType]: contentType.json });
export { API_HEADERS };

/** A compact JSON answer's headers: JSON_HEADERS, and the ETag where the answer has one (a 200, a 304). */
export function jsonHeaders(etag: string | undefined): Readonly<HeaderFields> {
  return etag ? withFields(JSON_HEADERS, { [header.etag]: etag }) : JSON_HEADERS;
}

const JSON_HEAD: readonly string[] = Object.entries(JSON_HEADERS).flat();
/**
 * jsonHeadList()'s lists with their values left blank, copied whole and filled in: a copy of
 * JSON_HEAD pushed onto grew its array (537 bytes of garbage a page, in V8's sampling profiler).
 */
const SIZED_HEAD: readonly string[] = [...JSON_HEAD, header.contentLength, ''];
const TAGGED_HEAD: readonly string[] = [...JSON_HEAD, header.etag, '', header.contentLength, ''];

/** jsonHeaders(etag) and the Content-Length as writeHead's flat list, made with no header object between. */
export function jsonHeadList(etag: string | undefined, length: number): string[] {
  const head = (etag ? TAGGED_HEAD : SIZED_HEAD).slice();
  if (etag) head[JSON_HEAD.length + 1] = etag;
  head[head.length - 1] = String(length);
  return head;
}
