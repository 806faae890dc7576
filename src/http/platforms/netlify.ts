import { ROUTES } from '../../core/route-table.js';
import { createFetchHandler } from '../fetch-handler.js';
import { edgeSite, httpRead, type EdgeProjectData } from '../edge-site.js';
import { SIX_MB_BODY_BYTES, SIX_MB_PAGE_CITIES, tooLarge } from './response-limit.js';

// A Netlify Function (v2: `(Request) => Response`) behind the site's `_redirects`: Netlify's CDN
// answers covered queries from the files; the rules rewrite the rest to the function's path
// (`/.netlify/functions/NAME` + the endpoint), and the function answers them as the endpoint,
// reading the site's edge files from the site's own CDN (the request's origin: Netlify runs the
// function only for the site's own domains), nothing of the dataset in the function.

/** Origins whose edge files an instance keeps at once (a site's domain, its deploy previews). */
const ORIGINS = 4;

/** The function's path prefix before the endpoint's path, as the rewrite sends it. */
export function netlifyFunction(data: EdgeProjectData, prefix: string): (request: Request) => Promise<Response> {
  const handlers = new Map<string, (request: Request) => Promise<Response>>();
  const handlerFor = (origin: string) => {
    let handler = handlers.get(origin);
    if (!handler) {
      if (handlers.size >= ORIGINS) handlers.delete(handlers.keys().next().value!);
      const read = httpRead((request) => fetch(request), origin);
      handler = createFetchHandler({
        site: edgeSite(data.settings, read, { maxPageCities: SIX_MB_PAGE_CITIES, stream: false }),
      });
      handlers.set(origin, handler);
    }
    return handler;
  };
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith(prefix)) url.pathname = url.pathname.slice(prefix.length) || '/';
    const response = await handlerFor(url.origin)(new Request(url, request));
    const length = Number(response.headers.get(ROUTES.header.contentLength));
    if (!(length > SIX_MB_BODY_BYTES)) return response;
    await response.body?.cancel();
    const refused = tooLarge(length, 'Netlify Functions');
    return new Response(request.method === 'HEAD' ? null : refused.body, {
      status: refused.status,
      headers: refused.headers,
    });
  };
}
