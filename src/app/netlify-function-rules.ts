import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROUTES } from '../core/route-table.js';
import { netlifyRedirects } from '../hosts/netlify.js';
import type { SiteSpec } from '../site/spec.js';

// `cities-api edge netlify` points the site's `_redirects` at its function. A later build of that
// site keeps them pointed there (unless it is given a --live-url of its own): otherwise a routine
// rebuild would silently stop calling the function and uncovered queries would get the 404.

/** Where Netlify's rewrites send uncovered queries: the function's own path, before the endpoint's. */
export const NETLIFY_FUNCTION_PATH = '/cities-api-live';

/** The site's `_redirects` with what no file covers sent to the function. */
export function functionRedirects(spec: SiteSpec): string {
  return netlifyRedirects({ ...spec, liveUrl: NETLIFY_FUNCTION_PATH });
}

/** Whether the site's `_redirects` is, byte for byte, the one `edge netlify` writes for `spec` (the site's built spec). */
export async function pointsAtFunction(site: string, spec: SiteSpec): Promise<boolean> {
  const text = await readFile(join(site, ROUTES.extras.netlifyRedirects), 'utf8').catch(() => null);
  return text === functionRedirects(spec);
}
