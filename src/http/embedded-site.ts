import { utf8 } from '../core/bytes.js';
import { CityIndex } from '../core/city-index.js';
import { CityTable } from '../core/city-table.js';
import { siteSpec } from '../site/spec.js';
import type { EdgeProjectData } from './edge-site.js';
import type { LazySiteContext, SiteContext } from './route-types.js';

/** What a project embeds of a small site: its settings and also its dataset file (`_cities-api/cities.json`). */
export interface EmbeddedData extends EdgeProjectData {
  /** The dataset file's text (one city per line), as the build wrote it. */
  readonly dataset: string;
}

/**
 * A site whose whole dataset is in memory, indexed at the first request, then kept for the
 * isolate's life (with ICU for the locale collation): for tests and small embedded uses. The
 * generated edge projects read the site's edge files instead (edge-site.ts).
 */
export function embeddedSite(data: EmbeddedData): LazySiteContext & { readonly data: EmbeddedData } {
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
