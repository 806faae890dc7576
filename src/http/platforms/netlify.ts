import { createFetchHandler } from '../fetch-handler.js';
import { embeddedSite, type EmbeddedData } from '../embedded-site.js';

// A Netlify Function (v2: `(Request) => Response`) behind the site's `_redirects`: Netlify's CDN
// answers covered queries from the files; the rules rewrite the rest to the function's path
// (`/.netlify/functions/NAME` + the endpoint), and the function answers them as the endpoint.

/** The function's path prefix before the endpoint's path, as the rewrite sends it. */
export function netlifyFunction(data: EmbeddedData, prefix: string): (request: Request) => Promise<Response> {
  const handler = createFetchHandler({ site: embeddedSite(data) });
  return (request) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith(prefix)) url.pathname = url.pathname.slice(prefix.length) || '/';
    return handler(new Request(url, request));
  };
}
