import { createFetchHandler } from '../fetch-handler.js';
import { embeddedSite, type EmbeddedData } from '../embedded-site.js';

// `deno serve` (Deno Deploy, a Deno server): the module's default export is `{ fetch }`; every
// answer is computed from the embedded dataset.

export function denoServer(data: EmbeddedData): { fetch(request: Request): Promise<Response> } {
  return { fetch: createFetchHandler({ site: embeddedSite(data) }) };
}
