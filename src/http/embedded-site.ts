import { utf8 } from '../core/bytes.js';
import { CityIndex } from '../core/city-index.js';
import { CityTable } from '../core/city-table.js';
import type { SiteSettings } from '../site/spec.js';
import { siteSpec } from '../site/spec.js';
import type { EdgeSite } from './fetch-handler.js';
import type { SiteContext } from './route.js';

/** A small site's settings and dataset file (`_cities-api/cities.json`), held in memory. */
export interface EmbeddedData {
  readonly settings: SiteSettings;
  /** The dataset file's text (one city per line), as the build wrote it. */
  readonly dataset: string;
}

/**
 * A site whose whole dataset is in memory, indexed at the first request, then kept for the
 * isolate's life (with ICU for the locale collation): for tests and small embedded uses. The
 * generated edge projects read the site's edge files instead (edge-site.ts).
 */
export function embeddedSite(data: EmbeddedData): EdgeSite & { readonly data: EmbeddedData } {
  let context: SiteContext | undefined;
  const loaded = () => {
    if (!context) {
      const table = CityTable.fromDatasetFile(utf8(data.dataset));
      context = { spec: siteSpec(data.settings, table.count), index: new CityIndex(table, data.settings.collation) };
    }
    return context;
  };
  return { data, spec: () => loaded().spec, index: () => loaded().index };
}
