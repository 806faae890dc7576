import { CitiesApiError } from '../../core/errors.js';
import type { PlatformCache } from '../../http/edge-cache.js';
import { createFetchHandler, type FetchHandler } from '../../http/fetch-handler.js';
import { pipeSink, type Pipe } from '../../http/pipe-sink.js';
import { edgeSite, httpRange, httpRead, type EdgeProjectData } from '../../http/edge-site.js';
import { pageCapOptions, type PageCapOptions } from '../page-cap.js';

// Cloudflare Workers with static assets: the site's files are the Worker's assets (wrangler.jsonc
// written by `cities-api edge cloudflare`); every request to the endpoint runs the Worker first
// (asset routing ignores the query string), which reads a covered query's page from the assets
// binding and computes the rest from the edge files, read through the same binding. Computed
// answers are kept in the zone's cache (Cache API, `caches.default`; not on workers.dev, where
// it does nothing), keyed by the build's tag: a repeated query costs one cache read. A streamed
// answer is written through workerd's IdentityTransformStream, whose writes settle once the
// runtime has taken the bytes: its parts' arrays are written again (http/pipe-sink.ts), and a page
// of every city costs a few of them, not 1,100 new ones for the GC (70 MB at 140k cities).

/** The assets binding (wrangler.jsonc's `assets.binding`). */
export interface CloudflareEnv {
  readonly ASSETS?: { fetch(request: Request): Promise<Response> };
}

/** The part of the Worker's ExecutionContext used: a cache write finishing after the answer. */
export interface CloudflareContext {
  waitUntil(work: Promise<unknown>): void;
}

type Assets = NonNullable<CloudflareEnv['ASSETS']>;
const ASSETS_HOST = 'https://assets.invalid';

export function cloudflareWorker(
  data: EdgeProjectData,
  options: PageCapOptions = {},
): {
  fetch(request: Request, env: CloudflareEnv, context?: CloudflareContext): Promise<Response>;
} {
  const cap = pageCapOptions(options, 'this Worker', 'worker.js', 'Workers Free stops a request at 10 ms of CPU');
  // One handler (and its memory of edge files) per binding: an isolate serves one Worker, whose binding stays the same.
  const handlers = new WeakMap<Assets, FetchHandler>();
  const cache = (globalThis as { caches?: { default?: PlatformCache } }).caches?.default;
  const Identity = (globalThis as { IdentityTransformStream?: new () => Pipe }).IdentityTransformStream;
  const sink = Identity && pipeSink(() => new Identity());
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
    fetch(request, env, context) {
      const assets = env.ASSETS;
      if (!assets) return unbound(request);
      let handler = handlers.get(assets);
      if (!handler) {
        // The binding answers by path; the host is any. A block of which a page needs few cities is read by range.
        const fetchAsset = (r: Request) => assets.fetch(r);
        const site = edgeSite(data.settings, httpRead(fetchAsset, ASSETS_HOST), {
          readRange: httpRange(fetchAsset, ASSETS_HOST),
          ...cap,
        });
        handler = createFetchHandler({
          site,
          file: (path, original) =>
            assets.fetch(new Request(new URL(`/${path}`, original.url), { headers: original.headers })),
          cache,
          sink,
        });
        handlers.set(assets, handler);
      }
      return handler(request, context && ((work) => context.waitUntil(work)));
    },
  };
}
