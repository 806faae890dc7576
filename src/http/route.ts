import { utf8, type Bytes } from '../core/bytes.js';
import { detailJson } from '../core/json-text.js';
import { optionsMetadata } from '../core/metadata.js';
import { answerListing } from '../core/page.js';
import { parseQuery, moreFieldsThan, lastValue, type QueryPair } from '../core/query-string.js';
import type { Negotiation } from '../core/negotiate.js';
import type { SiteSpec } from '../site/spec.js';
import { endpointPath, ROUTES } from '../core/route-table.js';
import { escapeUriPath, iriToUri, pathInfo, splitTarget } from '../core/url-path.js';
import { queryForFile, staticPathFor } from '../site/layout.js';
import { answerETag, matchesETag } from '../site/answer-tag.js';
import { badRequest, djangoPage, negotiateCached, notFound, render } from './render.js';
import {
  API_HEADERS,
  JSON_HEADERS,
  jsonHeaders,
  type ApiRequest,
  type HeaderFields,
  type ListingRoute,
  type Route,
  type SiteContext,
  withFields,
} from './route-types.js';

// How the server answers each request, decided without I/O: a complete answer, a static file
// for sirv to send, or a POST that needs the body. Headers and statuses are the reference's.

const { header, djangoHeaders: DJANGO_HEADERS, contentType, limits } = ROUTES;

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
  const { rawPath, query, queryAt } = splitTarget(req.target);
  const path = pathInfo(rawPath);
  const endpoint = endpointPath(site.spec.mount);
  // The endpoint without its slash: Django's redirect (compared in place, not sliced per request).
  if (path.length === endpoint.length - 1 && endpoint.startsWith(path)) {
    return djangoPage(
      301,
      withFields(DJANGO_HEADERS, {
        [header.location]: `${escapeUriPath(path)}/${query ? `?${iriToUri(query)}` : ''}`,
      }),
      '',
      contentType.html,
    );
  }
  if (path !== endpoint) return (filePaths ? fileRoute(req, path, query, site) : null) ?? notFound();
  if (moreFieldsThan(query, limits.fields)) return badRequest();
  return answerEndpoint(req, parseQuery(req.target, queryAt, queryAt + query.length), site);
}

/**
 * The page of a listing route, in the negotiated form. `etag`: the listing's ETag when the
 * caller already has it (listingETag of the same decision and site), so it is not made twice.
 */
export function answerListingRoute(
  req: ApiRequest,
  { pairs, negotiation }: ListingRoute,
  site: SiteContext,
  etag: () => string | undefined = () => listingETag({ pairs, negotiation }, site),
): Extract<Route, { kind: 'answer' }> {
  const listing = answerListing(site.index, pairs, site.spec.baseUrl);
  const answer = render(req, negotiation, listing.status, listing.body, pairs, site.index.count);
  const tag = listing.status === 200 ? etag() : undefined;
  return tag ? { ...answer, headers: withFields(answer.headers, { [header.etag]: tag }) } : answer;
}

/** ETags by a decision's query pairs (a remembered decision's are one array): what they were made for, and the tag. */
const etags = new WeakMap<
  readonly QueryPair[],
  { negotiation: Negotiation; spec: SiteSpec; tag: string; etag: string | undefined }
>();

/**
 * The ETag a listing's 200 answer carries: where the site names its data, for JSON (site/answer-tag.ts).
 * `remember`: kept by the decision's pairs for the next request of the same decision (a route
 * memo's); a decision seen for the first time is not (a query asked once would only fill the memo).
 */
export function listingETag(
  { pairs, negotiation }: Pick<ListingRoute, 'pairs' | 'negotiation'>,
  { spec, tag }: Pick<SiteContext, 'spec' | 'tag'>,
  remember = true,
): string | undefined {
  if (tag === undefined) return undefined;
  if (!remember) return answerETag(spec, tag, negotiation, pairs);
  // Hashing costs a never-seen answer about 1,900 instructions of its 110,000: a remembered decision's is hashed once per site.
  const known = etags.get(pairs);
  if (known && known.negotiation === negotiation && known.spec === spec && known.tag === tag) return known.etag;
  const etag = answerETag(spec, tag, negotiation, pairs);
  etags.set(pairs, { negotiation, spec, tag, etag });
  return etag;
}

/** The headers of a 304, when the request's If-None-Match names the ETag a listing's answer would carry (nothing is read). */
export function notModified(req: ApiRequest, etag: string | undefined): HeaderFields | null {
  return etag && matchesETag(req.ifNoneMatch, etag) ? jsonHeaders(etag) : null;
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
      return { ...options, headers: withFields(options.headers, preflight) };
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
  if (!(ROUTES.fileMethods as readonly string[]).includes(req.method) || moreFieldsThan(query, limits.fields))
    return null;
  const pairs = queryForFile(path, parseQuery(query));
  return pairs && answerEndpoint(req, pairs, site);
}
