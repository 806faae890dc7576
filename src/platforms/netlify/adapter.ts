import { endpointPath } from '../../core/route-table.js';
import { mountOf } from '../../core/url-path.js';
import { createFetchHandler } from '../../http/fetch-handler.js';
import type { LazySiteContext } from '../../http/route-types.js';
import { edgeSite, httpRead, type EdgeProjectData } from '../../http/edge-site.js';
import { SIX_MB_PAGE_CITIES } from '../response-limit.js';

// A Netlify Edge Function (Deno, in front of Netlify's CDN) on the endpoint's path: every request
// to the endpoint goes through the same route() as `cities-api serve`. A query a file covers is
// answered by `context.next()` for that file (Netlify's CDN serves it, with its ETag and 304s), the
// endpoint's headers set on it; every other answer is the function's own, computed from the site's
// edge files, which it reads from the site's own CDN at the request's origin (nothing of the
// dataset in the function). Netlify's `_redirects` and `_headers` never see the endpoint.

/** The part of Netlify's `Context` the function uses: the rest of the request chain (the CDN). */
export interface NetlifyContext {
  next(request: Request): Promise<Response>;
}

/** Origins whose edge files an instance keeps at once (a site's domain, its deploy previews). */
const ORIGINS = 4;

export function netlifyEdgeFunction(
  data: EdgeProjectData,
): (request: Request, context: NetlifyContext) => Promise<Response> {
  const sites = new Map<string, LazySiteContext>();
  const siteFor = (origin: string) => {
    let site = sites.get(origin);
    if (!site) {
      if (sites.size >= ORIGINS) sites.delete(sites.keys().next().value!);
      // Compact JSON is streamed from the edge data as it arrives; a page assembled whole (format=api, indent) is capped as on Functions.
      site = edgeSite(
        data.settings,
        httpRead((request) => fetch(request), origin),
        {
          maxPageCities: SIX_MB_PAGE_CITIES,
        },
      );
      sites.set(origin, site);
    }
    return site;
  };
  return (request, context) =>
    createFetchHandler({
      site: siteFor(new URL(request.url).origin),
      file: (path, original) =>
        context.next(new Request(new URL(`/${path}`, original.url), { headers: original.headers })),
    })(request);
}

/** The function's in-source config: the endpoint's path, with and without its slash (which redirects). */
export function netlifyEdgeConfig(data: EdgeProjectData): { path: string[] } {
  const endpoint = endpointPath(mountOf(data.settings.baseUrl));
  return { path: [endpoint.slice(0, -1), endpoint] };
}
