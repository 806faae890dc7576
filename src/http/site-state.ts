import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CityIndex } from '../core/city-index.js';
import { CitiesApiError } from '../core/errors.js';
import { FileCache } from './file-cache.js';
import { openSiteFiles, type FileHandler } from './site-files.js';
import { CityTable } from '../core/city-table.js';
import { DATASET_PATH, type ManifestHead } from '../site/manifest.js';
import { readManifestHead } from '../store/manifest-file.js';
import { siteSpec } from '../site/spec.js';
import { JSON_HEADERS, type SiteContext } from './route-types.js';
import { NAME_FIELDS } from '../core/fields.js';
import { siteRanks } from '../site/site-ranks.js';

/** Lets other work run (the requests of the site answered meanwhile) between steps of a long one. */
export const pause = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export type { FileHandler } from './site-files.js';

/** What the server answers from: a built site's files (through sirv) and its dataset in memory. */
export interface LoadedSite {
  readonly manifest: ManifestHead;
  readonly context: SiteContext;
  readonly files: FileHandler;
  /** sirv's answers kept in memory. */
  readonly cache: FileCache;
  /** Lets the site's files go: call once nothing reads them any more (a newer site is answered). */
  release(): void;
}

/** The site in `dir` as one build made it: its manifest, dataset and files all read through the same directory (site-files.ts). */
export async function loadSite(dir: string): Promise<LoadedSite> {
  const pinned = openSiteFiles(dir);
  try {
    const manifest = await readManifestHead(pinned.root);
    if (!manifest)
      throw new CitiesApiError(
        `${dir} holds no cities-api site: build it first (cities-api build --site ${dir}) or pass --data`,
        1,
      );
    const table = CityTable.fromDatasetFile(await readFile(join(pinned.root, DATASET_PATH)));
    // Every field ranked before the site is answered, from the build's rank files: no request waits for it.
    const edge = await siteRanks((path) => readFile(join(pinned.root, path)), table.count);
    const index = new CityIndex(table, manifest.settings.collation, edge?.ranks);
    await index.rankAll(NAME_FIELDS, pause);
    const context: SiteContext = { spec: siteSpec(manifest.settings, table.count), index, tag: edge?.tag };
    const { files } = pinned;
    return { manifest, context, files, cache: new FileCache(files, JSON_HEADERS), release: () => pinned.release() };
  } catch (error) {
    pinned.release();
    throw error;
  }
}
