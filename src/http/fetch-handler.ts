import { utf8 } from '../core/bytes.js';
import { CitiesApiError } from '../core/errors.js';
import { detailJson } from '../core/json-text.js';
import { ROUTES } from '../core/route-table.js';
import type { SiteSpec } from '../site/spec.js';
import { answerListingRoute, decideRoute, READ_ONLY_DETAIL, listingETag, notModified } from './route.js';
import { type ApiRequest, type LazySiteContext, type ListingRoute, jsonHeaders, withFields } from './route-types.js';
import { render } from './render.js';
import { matchesETag } from '../site/answer-tag.js';
import { cacheKey, fromCache, keptWhileSent, type PlatformCache } from './edge-cache.js';
import { streamedResponse, type BodySink, type StreamedAnswer } from './body-sink.js';
import type { NativeReader } from './handed-parts.js';
import { apiRequestOf, respond } from './fetch-messages.js';
import { PartPool } from '../core/envelope-stream.js';
import { pageFileAnswer, type OpenPageFile } from './page-file.js';

interface Live {
  readonly request: Request;
  readonly options: FetchHandlerOptions;
  readonly background: (work: Promise<unknown>) => void;
  /** The site file that holds the answer where the site holds it (a covered query). */
  readonly file?: string | undefined;
}

// The endpoint as one web-standard handler, `(Request) => Promise<Response>`, for edge runtimes
// (workerd, Deno, Netlify Functions, Lambda through platforms/lambda/adapter.ts): the same route() and page
// functions as `cities-api serve`, so its answers are serve's, byte for byte. Uses no Node API.

export interface FetchHandlerOptions {
  /** Where answers come from: the spec for every request, the index (or the streamed answer) for a page computed. */
  readonly site: LazySiteContext;
  /**
   * A site file's response where the platform serves the site's files (Cloudflare's assets
   * binding), asked with the client's request headers (conditional requests); null or a
   * non-2xx/304 answer when the file is absent: the answer is then computed.
   */
  readonly file?: ((path: string, request: Request) => Promise<Response | null>) | undefined;
  /** Also answer the site's file paths (as `serve --failover-origin`). */
  readonly filePaths?: boolean | undefined;
  /**
   * The site's openapi.json, read where the platform serves no site file itself (Deno, Lambda):
   * GET/HEAD of `/openapi.json` answers it, as static hosts serve the file and `cities-api serve`
   * its preview page. Absent: Django's 404 there, as the reference.
   */
  readonly openapi?: (() => Promise<Uint8Array>) | undefined;
  readonly onError?: ((error: unknown) => void) | undefined;
  /** Where computed answers are kept (the Workers Cache API): a repeated query is read from it (edge-cache.ts). */
  readonly cache?: PlatformCache | undefined;
  /** How the platform sends a streamed body and says when each part is taken (body-sink.ts); absent, a ReadableStream. */
  readonly sink?: BodySink | undefined;
  /**
   * A covered page's file opened, where the platform streams a file without JavaScript arrays
   * (self-hosted Deno): a covered GET is then answered with the file's bytes and the computed
   * answer's status and headers (page-file.ts); computed where it gives none.
   */
  readonly pageFile?: OpenPageFile | undefined;
  /**
   * Whether a streamed body's reader is the platform server's native one, which holds each part's
   * bytes itself before it reads the next (Deno's): the parts it has passed are then detached
   * (handed-parts.ts), their bytes freed once sent rather than when the GC runs.
   */
  readonly nativeReader?: NativeReader | undefined;
}

/**
 * The handler; `background` keeps work going past the answer (the Workers' `ctx.waitUntil`): a cache
 * write. `sent`: the path and query as the client sent them, where the platform gives them apart
 * from a Request whose URL resolved their dot segments (Lambda's event: fetch-messages.ts apiRequestOf).
 */
export type FetchHandler = (
  request: Request,
  background?: (work: Promise<unknown>) => void,
  sent?: string,
) => Promise<Response>;

const { header } = ROUTES;
const SERVER_ERROR = utf8(detailJson('A server error occurred.'));

export function createFetchHandler(options: FetchHandlerOptions): FetchHandler {
  return async (request, background = (work) => void work, sent) => {
    try {
      return await answer(request, options, background, sent);
    } catch (error) {
      options.onError?.(error);
      // Our own errors (edge data missing or of another build, a page too large) say what to do; others say nothing.
      const body = error instanceof CitiesApiError ? utf8(detailJson(error.message)) : SERVER_ERROR;
      return new Response(request.method === 'HEAD' ? null : body, {
        status: 500,
        headers: { [header.contentType]: ROUTES.contentType.json },
      });
    }
  };
}

async function answer(
  request: Request,
  options: FetchHandlerOptions,
  background: (work: Promise<unknown>) => void,
  sent: string | undefined,
): Promise<Response> {
  const req = apiRequestOf(request, sent);
  const spec = await options.site.spec();
  if (options.openapi && isOpenApiRequest(req)) {
    const body = await options.openapi();
    return respond(req, 200, withFields(ROUTES.djangoHeaders, { [header.contentType]: ROUTES.contentType.json }), body);
  }
  const decision = decideRoute(req, { spec }, options.filePaths);
  const live = { request, options, background };
  if (decision.kind === 'listing') return computed(req, decision, spec, live);
  if (decision.kind === 'answer') return respond(req, decision.status, decision.headers, decision.body);
  if (decision.kind === 'create') {
    const refused = render(req, decision.negotiation, 403, detailJson(READ_ONLY_DETAIL));
    return respond(req, 403, refused.headers, refused.body);
  }
  const found = options.file && (await options.file(decision.file, request));
  if (found && (found.ok || found.status === 304)) {
    const headers = new Headers(found.headers);
    for (const [name, value] of Object.entries(decision.headers)) headers.set(name, value);
    // A list in If-None-Match (`"a", "b"`), which the platform may compare whole, is compared here too.
    const etag = found.headers.get(header.etag);
    const status = etag && matchesETag(req.ifNoneMatch, etag) ? 304 : found.status;
    if (status === 304) await found.body?.cancel();
    return new Response(req.method === 'HEAD' || status === 304 ? null : found.body, { status, headers });
  }
  await found?.body?.cancel();
  // A file the site should hold but the platform does not serve: the answer is computed instead.
  const liveRoute = decideRoute(req, { spec, useFiles: false }, options.filePaths);
  if (liveRoute.kind !== 'listing') throw new Error(`${req.method} ${req.target} has no live answer`);
  return computed(req, liveRoute, spec, { ...live, file: decision.file });
}

/** A GET or HEAD of the site's openapi.json path (any query). */
function isOpenApiRequest(req: ApiRequest): boolean {
  const path = req.target.split('?', 1)[0];
  return path === `/${ROUTES.extras.openapi}` && (ROUTES.fileMethods as readonly string[]).includes(req.method);
}

/** A listing computed: a 304 when If-None-Match names its ETag, else from the cache, else computed (and kept). */
async function computed(
  req: ApiRequest,
  listing: ListingRoute,
  spec: SiteSpec,
  { request, options, background, file }: Live,
): Promise<Response> {
  const { site, cache } = options;
  const tag = await site.tag?.();
  const etag = listingETag(listing, { spec, tag });
  const unchanged = notModified(req, etag);
  if (unchanged) return new Response(null, { status: 304, headers: unchanged });
  const fromFile =
    file && options.pageFile && etag && tag !== undefined && req.method === 'GET'
      ? await pageFileAnswer(options.pageFile, file, listing, spec, site, tag, etag)
      : null;
  if (fromFile) return fromFile;
  const { negotiation } = listing;
  const key =
    cache && etag && tag !== undefined && req.method === 'GET' && 'indent' in negotiation
      ? cacheKey(request, req.target, tag, spec.count, negotiation.indent)
      : undefined;
  const hit = key && (await cache!.match(key));
  if (hit) return fromCache(hit, false);
  const answer = await computedAnswer(req, listing, spec, site, tag, options);
  // Kept only when its ETag names the build the key does (a self-hosted rebuild may come between).
  const tagged = answer instanceof Response ? answer.headers.get(header.etag) : answer.headers[header.etag];
  const kept = key && answer.status === 200 && tagged === etag ? { key, cache: cache! } : undefined;
  if (!(answer instanceof Response))
    return streamedResponse(answer, options.sink, kept, background, options.nativeReader);
  return kept ? keptWhileSent(answer, kept.key, kept.cache, background) : answer;
}

/** The answer: a compact JSON page streamed from the site's source where it streams (its parts in a pool's arrays), else assembled. */
async function computedAnswer(
  req: ApiRequest,
  listing: ListingRoute,
  spec: SiteSpec,
  site: LazySiteContext,
  tag: string | undefined,
  { sink, nativeReader }: Pick<FetchHandlerOptions, 'sink' | 'nativeReader'>,
): Promise<Response | StreamedAnswer> {
  const { negotiation } = listing;
  if (site.stream && 'renderer' in negotiation && negotiation.renderer === 'json' && negotiation.indent === null) {
    // Parts' arrays used again where the platform's sink says when each is sent; else new ones
    // (a pool's where a native reader may have them detached: only the arrays it made are).
    const pool = sink || nativeReader ? new PartPool() : undefined;
    const streamed = await site.stream(listing.pairs, spec.baseUrl, pool);
    const { status, body } = streamed;
    // The ETag of the build the page is read from.
    const built = { spec: { ...spec, count: streamed.count ?? spec.count }, tag: streamed.tag ?? tag };
    const etag = status === 200 ? listingETag(listing, built) : undefined;
    return {
      status,
      headers: jsonHeaders(etag),
      parts: req.method === 'HEAD' ? null : body[Symbol.asyncIterator](),
      pool,
    };
  }
  const answer = answerListingRoute(req, listing, { spec, tag, index: await site.index(listing.pairs) });
  return respond(req, answer.status, answer.headers, answer.body);
}
