import { endpointPath, ROUTES } from '../../core/route-table.js';
import { NETLIFY_CACHE_CONTROL, NETLIFY_CDN_CACHE_CONTROL } from '../../hosts/netlify.js';
import { anySpelling, mountOf } from '../../core/url-path.js';
import { createFetchHandler } from '../../http/fetch-handler.js';
import type { LazySiteContext } from '../../http/route-types.js';
import { edgeSite, httpRange, httpRead, type EdgeProjectData } from '../../http/edge-site.js';
import type { NativeReader } from '../../http/handed-parts.js';
import { readByDenoServer } from '../deno/native-reader.js';
import { SIX_MB_PAGE_CITIES } from '../response-limit.js';

// A Netlify Edge Function (Deno, in front of Netlify's CDN) on the endpoint's path: every request
// to the endpoint goes through the same route() as `cities-api serve`. A query a file covers is
// answered by `context.next()` for that file (Netlify's CDN serves it, with its ETag and 304s), the
// endpoint's headers set on it; every other answer is the function's own, computed from the site's
// edge files, which it reads from the site's own CDN at the request's origin (nothing of the
// dataset in the function). Netlify's `_redirects` and `_headers` never see the endpoint.
// Netlify's CDN keeps no function's answer unless told to (docs.netlify.com, "Optional
// configuration for edge functions", Response caching: the config's `cache: "manual"`, then the
// answer's `Netlify-CDN-Cache-Control`): every 200 of a GET or HEAD is marked, so a repeated
// query, computed or a file's, is the CDN's without running the function; its key is the whole
// query string and the Accept header (the answers' `Vary: Accept`), and a deploy empties it.

/** The part of Netlify's `Context` the function uses: the rest of the request chain (the CDN). */
export interface NetlifyContext {
  next(request: Request): Promise<Response>;
}

/** Origins whose edge files an instance keeps at once (a site's domain, its deploy previews). */
const ORIGINS = 4;

/**
 * Cities a streamed page may hold: Netlify stops an edge function at 50 ms of CPU a request, and
 * under `deno serve` (a shared 2-core machine) a page of 10,000 cities took 12-32 ms, one of
 * 20,000 34-47 ms at 20k cities and 42-74 ms at 140k (docs/netlify-functions.md, "Limits").
 */
export const NETLIFY_STREAM_PAGE_CITIES = 10_000;
export const NETLIFY_STREAM_LIMIT = {
  cities: NETLIFY_STREAM_PAGE_CITIES,
  why: 'cities a Netlify edge function streams within the 50 ms of CPU Netlify gives a request',
};

/**
 * `nativeReader`: whether a body is read by the platform's own server, whose parts are then let go
 * as it passes them (http/handed-parts.ts). Netlify's Edge Functions run on Deno: Deno's server,
 * where it reads the function's answer itself; anything else reading it (Netlify's own code) is
 * not recognised, and keeps the parts it reads.
 */
export function netlifyEdgeFunction(
  data: EdgeProjectData,
  { nativeReader = readByDenoServer }: { nativeReader?: NativeReader } = {},
): (request: Request, context: NetlifyContext) => Promise<Response> {
  const sites = new Map<string, LazySiteContext>();
  const siteFor = (origin: string) => {
    let site = sites.get(origin);
    if (!site) {
      if (sites.size >= ORIGINS) sites.delete(sites.keys().next().value!);
      // Compact JSON is streamed from the edge data as it arrives (within Netlify's CPU); a page assembled whole (format=api, indent) is capped as on Functions.
      // A block of which a page needs few cities is read by range (the CDN answers Range with a 206).
      const fetchFile = (request: Request) => fetch(request);
      site = edgeSite(data.settings, httpRead(fetchFile, origin), {
        maxPageCities: SIX_MB_PAGE_CITIES,
        streamLimit: NETLIFY_STREAM_LIMIT,
        readRange: httpRange(fetchFile, origin),
      });
      sites.set(origin, site);
    }
    return site;
  };
  return async (request, context) =>
    cdnCached(
      request,
      await createFetchHandler({
        site: siteFor(new URL(request.url).origin),
        file: (path, original) =>
          context.next(new Request(new URL(`/${path}`, original.url), { headers: original.headers })),
        nativeReader,
      })(request),
    );
}

const { header } = ROUTES;
const CACHED_METHODS: readonly string[] = ['GET', 'HEAD'];

/** The answer marked for Netlify's CDN: a 200 of a GET or HEAD is the deploy's for that URL and Accept; errors, redirects and 304s are not kept. */
function cdnCached(request: Request, response: Response): Response {
  if (response.status !== 200 || !CACHED_METHODS.includes(request.method)) return response;
  const headers = new Headers(response.headers);
  headers.set(header.netlifyCdnCacheControl, NETLIFY_CDN_CACHE_CONTROL);
  // The browser's, as the site's _headers give the files: revalidate, by ETag.
  headers.set(header.cacheControl, NETLIFY_CACHE_CONTROL);
  return new Response(response.body, { status: response.status, headers });
}

/**
 * The function's in-source config: the endpoint's path, with and without its slash (which
 * redirects), its answers cacheable by the CDN. A `pattern` (a regular expression on the request's
 * path), not a `path`: Netlify reads a `path` as a URLPattern, which matches one spelling of a path
 * (as typed or as escaped), where Django reads `/%61pi/cities/`, `/api%2Fcities/` and `/api/cities/`
 * alike, and where Netlify may match the path decoded (`/café/cities/`, netlify-cli's rewriter
 * decodes, `netlify dev`'s edge routing does not): every spelling of the endpoint, decoded or not.
 */
export function netlifyEdgeConfig(data: EdgeProjectData): { pattern: string; cache: 'manual' } {
  const path = endpointPath(mountOf(data.settings.baseUrl));
  return { pattern: `^${anySpelling(path.slice(0, -1))}${anySpelling('/')}?$`, cache: 'manual' };
}
