import { createFetchHandler } from '../fetch-handler.js';
import { embeddedSite, type EmbeddedData } from '../embedded-site.js';

// Cloudflare Workers with static assets: the site's files are the Worker's assets (wrangler.jsonc
// written by `cities-api edge cloudflare`); every request to the endpoint runs the Worker first
// (asset routing ignores the query string), which reads a covered query's page from the assets
// binding and computes the rest.

/** The assets binding (wrangler.jsonc's `assets.binding`). */
export interface CloudflareEnv {
  readonly ASSETS?: { fetch(request: Request): Promise<Response> };
}

export function cloudflareWorker(data: EmbeddedData): { fetch(request: Request, env: CloudflareEnv): Promise<Response> } {
  const site = embeddedSite(data);
  const computed = createFetchHandler({ site });
  let withAssets: ((request: Request) => Promise<Response>) | undefined;
  return {
    fetch(request, env) {
      const assets = env.ASSETS;
      if (!assets) return computed(request);
      withAssets ??= createFetchHandler({
        site,
        file: (path, original) => assets.fetch(new Request(new URL(`/${path}`, original.url), { headers: original.headers })),
      });
      return withAssets(request);
    },
  };
}
