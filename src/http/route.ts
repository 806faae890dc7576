import { browsablePage } from '../core/browsable.js';
import { utf8, type Bytes } from '../core/bytes.js';
import { detailJson, lazyParts } from '../core/json-text.js';
import { optionsMetadata } from '../core/metadata.js';
import { negotiate, type Negotiation } from '../core/negotiate.js';
import { prettyParts } from '../core/pretty-json.js';
import { answerListing, bodyBytes, type PageIndex } from '../core/page.js';
import { paginate, pageSizeFrom } from '../core/paginate.js';
import { lastValue, parseQuery, queryFieldCount, type QueryPair } from '../core/query-string.js';
import { endpointPath, ROUTES } from '../core/route-table.js';
import { escapeUriPath, iriToUri, pathInfo } from '../core/url-path.js';
import { queryForFile, staticPathFor } from '../site/layout.js';
import type { SiteSpec } from '../site/spec.js';
import { answerETag, matchesETag } from '../site/answer-tag.js';

// How the server answers each request, decided without I/O: a complete answer, a static file
// for sirv to send, or a POST that needs the body. Headers and statuses are the reference's.

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
  /** The compact JSON answer as it is read (an edge source's): a page of any size, never held whole. Absent: assembled from index(). */
  stream?(
    pairs: readonly QueryPair[],
    baseUrl: string,
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

const { header, headers: API_HEADERS, djangoHeaders: DJANGO_HEADERS, contentType, limits } = ROUTES;
/** Every answer of the endpoint in compact JSON, and every answer from a site file (with sirv's own). */
export const JSON_HEADERS: Readonly<HeaderFields> = { ...API_HEADERS, [header.contentType]: contentType.json };
export { API_HEADERS };
/** Django's ERROR_PAGE_TEMPLATE, byte for byte (it starts with a newline). */
const NOT_FOUND_PAGE =
  '\n<!doctype html>\n<html lang="en">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n';
const BAD_REQUEST_PAGE =
  '\n<!doctype html>\n<html lang="en">\n<head>\n  <title>Bad Request (400)</title>\n</head>\n<body>\n  <h1>Bad Request (400)</h1><p></p>\n</body>\n</html>\n';

/** The answer (403) to a POST where cities cannot be created: the live server without --writable, and every edge function. */
export const READ_ONLY_DETAIL =
  'This API is read-only: start cities-api serve with --writable and CITIES_API_TOKEN set to accept POST.';

const URI_TOO_LONG = utf8(
  detailJson(`Request-URI too long: the path and query must fit in ${limits.targetBytes} bytes.`),
);

/** `filePaths`: also answer GET/HEAD of the site's file paths, as a failover origin behind a CDN that rewrites queries to files (see fileRoute). */
export function route(req: ApiRequest, site: SiteContext, filePaths = false): Route {
  const decided = decideRoute(req, site, filePaths);
  return decided.kind === 'listing' ? answerListingRoute(req, decided, site) : decided;
}

/**
 * route(), the page left uncomputed: for a GET or HEAD, a `static` or `listing` decision depends
 * on the method, target and Accept header and the site only, so a server may remember it (see
 * route-memo.ts) and compute only the page with answerListingRoute().
 */
export function decideRoute(
  req: ApiRequest,
  site: Omit<SiteContext, 'index'>,
  filePaths = false,
): Route | ListingRoute {
  if (req.target.length > limits.targetBytes)
    return { kind: 'answer', status: 414, headers: JSON_HEADERS, body: URI_TOO_LONG };
  const { rawPath, query } = splitTarget(req.target);
  const path = pathInfo(rawPath);
  const endpoint = endpointPath(site.spec.mount);
  if (path === endpoint.slice(0, -1)) {
    return page(
      301,
      { ...DJANGO_HEADERS, [header.location]: `${escapeUriPath(path)}/${query ? `?${iriToUri(query)}` : ''}` },
      '',
      contentType.html,
    );
  }
  if (path !== endpoint)
    return (
      (filePaths ? fileRoute(req, path, query, site) : null) ??
      page(404, DJANGO_HEADERS, NOT_FOUND_PAGE, contentType.djangoPage)
    );
  if (queryFieldCount(query) > limits.fields) return badRequest();
  return answerEndpoint(req, parseQuery(query), site);
}

/** The page of a listing route, in the negotiated form. */
export function answerListingRoute(
  req: ApiRequest,
  { pairs, negotiation }: ListingRoute,
  site: SiteContext,
): Extract<Route, { kind: 'answer' }> {
  const listing = answerListing(site.index, pairs, site.spec.baseUrl);
  const answer = render(req, negotiation, listing.status, listing.body, pairs, site.index.count);
  const etag = listing.status === 200 ? listingETag({ pairs, negotiation }, site) : undefined;
  return etag ? { ...answer, headers: { ...answer.headers, [header.etag]: etag } } : answer;
}

/** The ETag a listing's 200 answer carries: where the site names its data, for JSON (site/answer-tag.ts). */
export function listingETag(
  { pairs, negotiation }: Pick<ListingRoute, 'pairs' | 'negotiation'>,
  site: Pick<SiteContext, 'spec' | 'tag'>,
): string | undefined {
  return site.tag === undefined ? undefined : answerETag(site.spec, site.tag, negotiation, pairs);
}

/** The headers of a 304, when the request's If-None-Match names the ETag a listing's answer would carry (nothing is read). */
export function notModified(req: ApiRequest, etag: string | undefined): HeaderFields | null {
  return etag && matchesETag(req.ifNoneMatch, etag) ? { ...JSON_HEADERS, [header.etag]: etag } : null;
}

/** The endpoint's answer to a request with these query pairs. */
function answerEndpoint(
  req: ApiRequest,
  pairs: readonly QueryPair[],
  site: Omit<SiteContext, 'index'>,
): Route | ListingRoute {
  const negotiation = negotiateCached(lastValue(pairs, ROUTES.param.format), req.accept);
  const answer = (status: number, json: string | Bytes | Iterable<Bytes>) =>
    render(req, negotiation, status, json, pairs);
  if ('status' in negotiation) return answer(negotiation.status, detailJson(negotiation.detail));
  switch (req.method) {
    case 'GET':
    case 'HEAD': {
      const file =
        site.useFiles !== false && negotiation.renderer === 'json' && negotiation.indent === null
          ? staticPathFor(pairs, site.spec)
          : null;
      if (file) return { kind: 'static', file, headers: JSON_HEADERS };
      return { kind: 'listing', pairs, negotiation };
    }
    case 'OPTIONS': {
      const options = answer(200, JSON.stringify(optionsMetadata()));
      if (req.preflightHeaders === undefined) return options;
      const preflight = {
        [header.allowMethods]: API_HEADERS.Allow,
        [header.maxAge]: '86400',
        ...(req.preflightHeaders ? { [header.allowHeaders]: req.preflightHeaders } : {}),
      };
      return { ...options, headers: { ...options.headers, ...preflight } };
    }
    case 'POST':
      return { kind: 'create', headers: API_HEADERS, negotiation };
    default:
      return answer(405, detailJson(`Method "${req.method}" not allowed.`));
  }
}

/**
 * A GET or HEAD of a site file's path, as a host that rewrote a query to that file asks its
 * failover origin once the site no longer holds it: the endpoint's answer to the query the file
 * stands for (queryForFile). Null for any other request, which gets Django's 404.
 */
function fileRoute(
  req: ApiRequest,
  path: string,
  query: string,
  site: Omit<SiteContext, 'index'>,
): Route | ListingRoute | null {
  if (!(ROUTES.fileMethods as readonly string[]).includes(req.method) || queryFieldCount(query) > limits.fields)
    return null;
  const pairs = queryForFile(path, parseQuery(query));
  return pairs && answerEndpoint(req, pairs, site);
}

/** A request target's path and query, as gunicorn splits it: a fragment off first, then the query. */
function splitTarget(target: string): { rawPath: string; query: string } {
  const hash = target.indexOf('#');
  const rest = hash < 0 ? target : target.slice(0, hash);
  const q = rest.indexOf('?');
  return q < 0 ? { rawPath: rest, query: '' } : { rawPath: rest.slice(0, q), query: rest.slice(q + 1) };
}

/**
 * The origin form (`/path?query`) of a request target: an absolute-form target
 * (`http://host/cities/`, as sent to proxies) loses its scheme and authority, as gunicorn reads it.
 */
export function originForm(target: string): string {
  const absolute = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(target);
  if (!absolute) return target;
  const rest = target.slice(absolute[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** An API answer in the negotiated form: JSON (indented on request) or the browsable page. */
export function render(
  req: ApiRequest,
  negotiation: Negotiation,
  status: number,
  body: string | Bytes | Iterable<Bytes>,
  pairs?: readonly QueryPair[],
  count?: number,
): Extract<Route, { kind: 'answer' }> {
  const indent = 'indent' in negotiation ? negotiation.indent : null;
  const html = 'renderer' in negotiation && negotiation.renderer === 'html';
  if (!html && !indent)
    return { kind: 'answer', status, headers: JSON_HEADERS, body: typeof body === 'string' ? utf8(body) : body };
  const json: Iterable<Bytes> = typeof body === 'string' ? [utf8(body)] : body instanceof Uint8Array ? [body] : body;
  let produce = () => prettyParts(json, indent!);
  if (html) {
    pairs ??= parseQuery(splitTarget(req.target).query);
    const { Allow, Vary } = API_HEADERS;
    const shown = { Allow, [header.contentType]: contentType.json, Vary };
    const pageSize = lastValue(pairs, ROUTES.param.pageSize);
    // The paginator of a listing: the slice the answer holds (count is given for listings only).
    const pager =
      count !== undefined && status === 200
        ? (paginate(count, pageSizeFrom(pageSize), lastValue(pairs, ROUTES.param.page)) ?? undefined)
        : undefined;
    const page = {
      method: req.method,
      target: req.target,
      status,
      headers: shown,
      json,
      ordering: lastValue(pairs, ROUTES.param.ordering),
      writable: req.writable,
      pageSize,
      pairs,
      pager,
    };
    produce = () => browsablePage(page);
  }
  // A large answer (in parts) stays in parts, produced while it is sent.
  const bytes =
    typeof body !== 'string' && !(body instanceof Uint8Array) && 'byteLength' in body
      ? lazyParts(produce)
      : bodyBytes(produce());
  return {
    kind: 'answer',
    status,
    headers: html ? { ...API_HEADERS, [header.contentType]: contentType.html } : JSON_HEADERS,
    body: bytes,
  };
}

/** By format, then by Accept header (absent is its own key, never equal to any text). */
const negotiations = new Map<string | undefined, Map<string | undefined, Negotiation>>();
let remembered = 0;

/** negotiate(), remembered for the few Accept headers clients really send. */
function negotiateCached(format: string | undefined, accept: string | undefined): Negotiation {
  const byAccept = negotiations.get(format);
  const known = byAccept?.get(accept);
  if (known) return known;
  const result = negotiate(format, accept);
  if ((format?.length ?? 0) + (accept?.length ?? 0) > 512) return result; // a client's oddity, not worth keeping
  if (remembered >= 256) {
    negotiations.clear();
    remembered = 0;
  }
  let forFormat = negotiations.get(format);
  if (!forFormat) negotiations.set(format, (forFormat = new Map()));
  forFormat.set(accept, result);
  remembered++;
  return result;
}

/** Django's own 400 page, for a request it refuses as suspicious (too many fields). */
export function badRequest(): Extract<Route, { kind: 'answer' }> {
  return page(400, DJANGO_HEADERS, BAD_REQUEST_PAGE, contentType.djangoPage);
}

function page(status: number, headers: HeaderFields, html: string, type: string): Extract<Route, { kind: 'answer' }> {
  return { kind: 'answer', status, headers: { ...headers, [header.contentType]: type }, body: utf8(html) };
}
