import type { Manifest } from '../site/manifest.js';
import { NAME_FIELDS } from '../core/fields.js';
import { detailJson } from '../core/json-text.js';

/** What a static host's config needs to know about a built site. */
export interface HostingSettings {
  /** The base URL the site was built for (no trailing slash). */
  readonly baseUrl: string;
  /** The base URL's path, where `/cities/` is mounted: `` or e.g. `/api/v1`. */
  readonly mount: string;
  readonly count: number;
  /** Configured page sizes (the default size 10 without `page_size` is always built too). */
  readonly pageSizes: readonly number[];
  /** Precomputed orderings (`default`, `name_en`, `-name_ar`, ...); all 33 unless the build chose fewer. */
  readonly orderings: readonly string[];
  /** Where requests no file covers are sent (a running `cities-api serve`), if anywhere. */
  readonly liveUrl?: string | undefined;
}

export function hostingSettings(manifest: Pick<Manifest, 'settings' | 'dataset'>, liveUrl = manifest.settings.liveUrl ?? undefined): HostingSettings {
  const { baseUrl, pageSizes, orderings } = manifest.settings;
  return {
    baseUrl,
    mount: new URL(baseUrl).pathname.replace(/\/+$/, ''),
    count: manifest.dataset.count,
    pageSizes,
    orderings,
    ...(liveUrl ? { liveUrl: liveUrl.replace(/\/+$/, '') } : {}),
  };
}

/** The file a static-only host answers (404) for a query that needs the live server. */
export const NOT_PRECOMPUTED_PATH = 'cities/not-precomputed.json';

/** The honest answer of a static-only host to a query no file covers. */
export function notPrecomputedJson(pageSizes: readonly number[]): string {
  return detailJson(
    `Not precomputed: this static host answers ordering=<one of ${NAME_FIELDS.length * 2} name_* orderings, e.g. name_en or -name_ar>, ` +
      `page_size=${pageSizes.join('|')} (or any size >= the number of cities) and page; any other query needs the live server (cities-api serve).`,
  );
}
