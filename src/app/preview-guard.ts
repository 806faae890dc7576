import { lstat, readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import { ROUTES } from '../core/route-table.js';
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
// would join that tree, shipped with it or swapped from under this preview by its next build. Nor
// around one: a build carries what is not its own into its new tree and swaps it in, so that site
// would be swapped from under its server or its build (and left behind by a build that fails).

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
 * directory lies inside another site: its pages, linking to this machine, would be added to that
 * site's tree (kept by its next build, uploaded with it, swapped from under this preview by it);
 * or holds one (siteBelow). Or undefined.
 */
export async function besideAnotherSite(preview: Preview): Promise<CitiesApiError | undefined> {
  const { dir, data } = preview;
  const site = await resolveSiteDir(dir).catch(() => resolve(dir));
  const below = await siteBelow(site);
  if (below)
    return new CitiesApiError(
      `${dir} holds ${below.dir}, ${below.what}: a preview's build there would carry it into its own new tree ` +
        `and swap that in, from under that site's server and builds. Preview ${data} into a directory that holds no site (${optionNamed('site')}) (nothing was written)`,
      2,
    );
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

/**
 * A site in a directory under `site` (one with a manifest, or whose lock or preview marker, beside
 * it, says a build or a preview holds it), as siteAt says; links are never followed. Only
 * directories holding directories are listed, and `site` itself: a site is a directory, and so
 * the pages' directories (all but a site's whole files, at 140k cities) are not read. A lock or
 * marker in such a leaf, for a site not made yet, is not seen.
 */
async function siteBelow(site: string): Promise<{ dir: string; what: string } | undefined> {
  const pending = [site];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const sibling = /^\.(.+)\.(?:lock|preview)$/.exec(entry.name);
      const other = entry.isDirectory() && entry.name === ROUTES.file.meta ? dir : sibling && join(dir, sibling[1]!);
      const what = other && other !== site ? await siteAt(other) : undefined;
      if (what) return { dir: other!, what };
      // A directory's links: 2 and one per directory in it (ext4, tmpfs); any other count (btrfs's 1) is listed.
      if (entry.isDirectory() && (await lstat(path).catch(() => null))?.nlink !== 2) pending.push(path);
    }
  }
  return undefined;
}
