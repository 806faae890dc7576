import { CitiesApiError } from '../../core/errors.js';
import { createFetchHandler } from '../../http/fetch-handler.js';
import { edgeSite, httpRead, type EdgeProjectData } from '../../http/edge-site.js';

// Cloudflare Workers with static assets: the site's files are the Worker's assets (wrangler.jsonc
// written by `cities-api edge cloudflare`); every request to the endpoint runs the Worker first
// (asset routing ignores the query string), which reads a covered query's page from the assets
// binding and computes the rest from the edge files, read through the same binding.

/** The assets binding (wrangler.jsonc's `assets.binding`). */
export interface CloudflareEnv {
  readonly ASSETS?: { fetch(request: Request): Promise<Response> };
}

type Assets = NonNullable<CloudflareEnv['ASSETS']>;
type Handler = (request: Request) => Promise<Response>;

export function cloudflareWorker(data: EdgeProjectData): {
  fetch(request: Request, env: CloudflareEnv): Promise<Response>;
} {
  // One handler (and its memory of edge files) per binding: an isolate serves one Worker, whose binding stays the same.
  const handlers = new WeakMap<Assets, Handler>();
  const unbound = createFetchHandler({
    site: {
      spec: () =>
        Promise.reject(
          new CitiesApiError(
            'the Worker has no ASSETS binding: deploy it with the wrangler.jsonc written by cities-api edge cloudflare',
          ),
        ),
      index: () => Promise.reject(new Error('unreachable')),
    },
  });
  return {
    fetch(request, env) {
      const assets = env.ASSETS;
      if (!assets) return unbound(request);
      let handler = handlers.get(assets);
      if (!handler) {
        // The binding answers by path; the host is any.
        const site = edgeSite(
          data.settings,
          httpRead((r) => assets.fetch(r), 'https://assets.invalid'),
        );
        handler = createFetchHandler({
          site,
          file: (path, original) =>
            assets.fetch(new Request(new URL(`/${path}`, original.url), { headers: original.headers })),
        });
        handlers.set(assets, handler);
      }
      return handler(request);
    },
  };
}
