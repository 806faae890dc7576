import { dirname, resolve } from 'node:path';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import type { SiteSettings } from '../site/spec.js';
import { normalizeBaseUrl } from '../site/spec.js';
import { readManifestHead } from '../store/manifest-file.js';
import { resolveSiteDir } from '../store/site-path.js';
import { isLiveHolder, whoHolds } from '../fs/lock-holder.js';
import { siteSiblings } from '../fs/lock.js';
import { runningPreview } from './preview-marker.js';
import type { Preview } from './build-options.js';

// A preview (serve --data without --base-url) builds its site with links on its own URL. A site
// built for deployment (its base URL not on this machine) is never rewritten by one: checked
// before the dataset is read (site-builder.ts), and again by the build holding the site's lock
// (site-writer.ts), against the site then there (a build for deployment may have finished meanwhile).
// Nor is one built inside another site, deployed or a preview's, built or being built: its files
// would join that tree, shipped with it or swapped from under this preview by its next build.

/** Whether a base URL is one a local preview gives its site (this machine's), not a deployment's. */
function isLocal(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === 'localhost' || host === '[::1]' || host === '0.0.0.0' || /^127\./.test(host);
}

/** The base URL a preview on `serverUrl` builds with: a wildcard address is linked as localhost. */
export function previewUrl(serverUrl: string): string {
  return serverUrl.replace(/\/\/(0\.0\.0\.0|\[::\])/, '//localhost');
}

/** Why a preview must not replace a site built with `settings` (exit 2, nothing written), or undefined. */
export function previewRefusal(preview: Preview, settings: SiteSettings | undefined): CitiesApiError | undefined {
  const { dir, data, url } = preview;
  // (A site whose links are already this server's, e.g. an earlier preview's on --host IP, loses nothing.)
  if (!settings || settings.baseUrl === normalizeBaseUrl(url) || isLocal(settings.baseUrl)) return undefined;
  return new CitiesApiError(
    `${dir} holds a site built for ${settings.baseUrl}: a preview would rewrite its links to ${url}. ` +
      `Serve it as built (without ${optionNamed('data')}), preview ${data} into another directory (${optionNamed('site')}), ` +
      `or pass ${optionNamed('baseUrl')} ${settings.baseUrl} to rebuild it for that URL (nothing was written)`,
    2,
  );
}

/**
 * Why a preview must not build its site in `preview.dir` (exit 2, nothing written) when that
 * directory lies inside another site (siteAbove): its pages, linking to this machine, would be
 * added to that site's tree (kept by its next build, uploaded with it, swapped from under this
 * preview by it). Or undefined.
 */
export async function insideAnotherSite(preview: Preview): Promise<CitiesApiError | undefined> {
  const { dir, data } = preview;
  const site = await resolveSiteDir(dir).catch(() => resolve(dir));
  for (let above = dirname(site); ; above = dirname(above)) {
    const what = await siteAt(above);
    if (what)
      return new CitiesApiError(
        `${dir} is inside ${above}, ${what}: a preview there would add its pages, ` +
          `linking to this machine, to that site. Preview ${data} into a directory outside it (${optionNamed('site')}) (nothing was written)`,
        2,
      );
    if (dirname(above) === above) return undefined;
  }
}

/**
 * What the directory `dir` is that no preview may be built inside, or undefined: a site (built for
 * deployment, or for a preview), or one not built yet that a running preview serves (its marker)
 * or a build is writing (its lock held).
 */
async function siteAt(dir: string): Promise<string | undefined> {
  const settings = (await readManifestHead(dir).catch(() => null))?.settings;
  if (settings)
    return isLocal(settings.baseUrl)
      ? `the site of a preview (built for ${settings.baseUrl})`
      : `a site built for ${settings.baseUrl}`;
  const preview = await runningPreview(dir).catch(() => null);
  if (preview) return `the site of a preview running at ${preview.url} (pid ${preview.pid})`;
  const holder = await whoHolds(siteSiblings(dir).lock).catch(() => null);
  if (holder && isLiveHolder(holder)) return `a site a build is writing (pid ${holder.pid})`;
  return undefined;
}
