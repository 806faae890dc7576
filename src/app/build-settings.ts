import { CitiesApiError, optionNamed } from '../core/errors.js';
import { DEFAULT_PAGE_SIZE } from '../core/paginate.js';
import { endpointPath } from '../core/route-table.js';
import { escapeUriPath, mountOf } from '../core/url-path.js';
import { checkLiveUrl } from '../hosts/live-url.js';
import { workerFirstRules } from '../platforms/cloudflare/worker-first.js';
import type { ManifestHead } from '../site/manifest.js';
import {
  DEFAULT_BASE_URL,
  DEFAULT_COLLATION,
  DEFAULT_COMPRESSION,
  DEFAULT_PAGE_SIZES,
  normalizeBaseUrl,
  parseCollation,
  parseCompression,
  parseHost,
  parseOrderings,
  parsePageSizes,
  type Compression,
  type Host,
  type SiteSettings,
} from '../site/spec.js';
import { SITE_FORMAT, VERSION } from '../site/version.js';
import type { BuildOptions } from './build-options.js';

// What a build is asked for: its settings with defaults filled in, and the manifest they make, by
// which a site is known to be built from the very same input.

/** The settings the options ask for, defaults filled in (a site for one host: its first pages not yet known). */
export function settingsOf(options: BuildOptions): SiteSettings {
  const host = options.host === undefined ? undefined : parseHost(options.host);
  const baseUrl = normalizeBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
  // Refused now, not after the build: a base path `edge cloudflare` could route no Worker for.
  if (host === 'cloudflare') workerFirstRules(escapeUriPath(endpointPath(mountOf(baseUrl))));
  return {
    baseUrl,
    collation: parseCollation(options.collation ?? DEFAULT_COLLATION),
    pageSizes: parsePageSizes(options.pageSizes ?? DEFAULT_PAGE_SIZES),
    orderings: parseOrderings(options.orderings ?? 'all'),
    defaultPageSize: DEFAULT_PAGE_SIZE,
    compression: host ? hostCompression(host, options) : compressionOf(options),
    liveUrl: options.liveUrl ? checkLiveUrl(options.liveUrl) : null,
    ...(host ? { host } : {}),
  };
}

/**
 * A site for one host with its budget (last in the settings, as the manifest records them): its
 * first pages if not every page, its fine blocks' size if any, its edge files' count.
 */
export function budgeted(
  settings: SiteSettings,
  { firstPages, fineBlockBytes, edgeFiles }: Pick<SiteSettings, 'firstPages' | 'fineBlockBytes' | 'edgeFiles'>,
): SiteSettings {
  return {
    ...settings,
    ...(firstPages !== undefined && { firstPages }),
    ...(fineBlockBytes !== undefined && { fineBlockBytes }),
    ...(edgeFiles !== undefined && { edgeFiles }),
  };
}

/** A host that compresses by itself (Cloudflare) takes no `.gz`/`.br`: asking for them contradicts --for. */
function hostCompression(host: Host, options: Pick<BuildOptions, 'compression' | 'compress'>): Compression {
  const level = compressionOf(options);
  if (options.compression !== undefined && level !== 'none')
    throw new CitiesApiError(
      `${optionNamed('builtFor')} ${host} builds no .gz/.br (${host} compresses by itself), and ${optionNamed('compression')} ${level} asks for them: drop ${optionNamed('compression')}`,
      2,
    );
  return 'none';
}

/** The manifest (without its files) of a site built here, now, with these settings from this dataset. */
export function manifestHead(settings: SiteSettings, dataset: ManifestHead['dataset']): ManifestHead {
  return {
    generator: 'cities-api',
    version: VERSION,
    settings,
    dataset,
    runtime: {
      icu: process.versions.icu ?? 'none',
      cldr: process.versions.cldr ?? 'none',
      unicode: process.versions.unicode ?? 'none',
    },
    format: SITE_FORMAT,
  };
}

/** The level the options ask for; the older `compress: false` is `none`, and contradicts any other. */
function compressionOf(options: Pick<BuildOptions, 'compression' | 'compress'>): Compression {
  const level = options.compression === undefined ? undefined : parseCompression(options.compression);
  if (options.compress !== false) return level ?? DEFAULT_COMPRESSION;
  if (level !== undefined && level !== 'none') {
    throw new CitiesApiError(
      `${optionNamed('compress')} (compress: false) asks for no .gz/.br, ${optionNamed('compression')} ${level} for them: give only ${optionNamed('compression')} (none, fast or best)`,
      2,
    );
  }
  return 'none';
}

/** Whether a site was built from this very input (same generator version and format, settings, dataset bytes and ICU/Unicode data). */
export function sameInput(site: ManifestHead | null, manifest: ManifestHead): boolean {
  return !!site && JSON.stringify(site) === JSON.stringify(manifest);
}
