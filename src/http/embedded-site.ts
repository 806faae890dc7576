import { utf8 } from '../core/bytes.js';
import { CityIndex } from '../core/city-index.js';
import { CityTable } from '../core/city-table.js';
import type { SiteSettings } from '../site/spec.js';
import { siteSpec } from '../site/spec.js';
import type { EdgeSite } from './fetch-handler.js';
import type { SiteContext } from './route.js';

/** What an edge project embeds of a built site: its settings and its dataset file (`_cities-api/cities.json`). */
export interface EmbeddedData {
  readonly settings: SiteSettings;
  /** The dataset file's text (one city per line), as the build wrote it. */
  readonly dataset: string;
}

/** A site whose whole dataset is in the bundle: indexed at the first request, then kept for the isolate's life. */
export function embeddedSite(data: EmbeddedData): EdgeSite & { readonly data: EmbeddedData } {
  let context: SiteContext | undefined;
  return {
    data,
    context() {
      if (!context) {
        const table = CityTable.fromDatasetFile(utf8(data.dataset));
        context = { spec: siteSpec(data.settings, table.count), index: new CityIndex(table, data.settings.collation) };
      }
      return context;
    },
  };
}
