import type { ReadSiteFile } from '../../site/edge-source.js';
import { ROUTES } from '../../core/route-table.js';
import { createFetchHandler } from '../fetch-handler.js';
import { edgeSite, type EdgeProjectData } from '../edge-site.js';

// `deno serve` (Deno Deploy, a Deno server): the module's default export is `{ fetch }`; every
// answer is computed from the site's edge files, which `read` takes from the site's directory
// shipped with the entry (main.js written by `cities-api edge deno`).

export function denoServer(data: EdgeProjectData, read: ReadSiteFile): { fetch(request: Request): Promise<Response> } {
  const openapi = () => read(ROUTES.extras.openapi);
  return { fetch: createFetchHandler({ site: edgeSite(data.settings, read), openapi }) };
}
