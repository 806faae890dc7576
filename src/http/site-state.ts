import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sirv from 'sirv';
import { CityIndex } from '../core/city-index.js';
import { CitiesApiError } from '../core/errors.js';
import { FileCache } from './file-cache.js';
import { CityTable } from '../core/city-table.js';
import { DATASET_PATH, type ManifestHead } from '../site/manifest.js';
import { readManifestHead } from '../store/manifest-file.js';
import { ROUTES } from '../core/route-table.js';
import { siteSpec } from '../site/spec.js';
import { JSON_HEADERS, type SiteContext } from './route.js';

export type FileHandler = ReturnType<typeof sirv>;

/** What the server answers from: a built site's files (through sirv) and its dataset in memory. */
export interface LoadedSite {
  readonly manifest: ManifestHead;
  readonly context: SiteContext;
  readonly files: FileHandler;
  /** sirv's answers kept in memory. */
  readonly cache: FileCache;
}

export async function loadSite(dir: string): Promise<LoadedSite> {
  const manifest = await readManifestHead(dir);
  if (!manifest)
    throw new CitiesApiError(
      `${dir} holds no cities-api site: build it first (cities-api build --out ${dir}) or pass --data`,
      1,
    );
  const table = CityTable.fromDatasetFile(await readFile(join(dir, DATASET_PATH)));
  const context: SiteContext = {
    spec: siteSpec(manifest.settings, table.count),
    index: new CityIndex(table, manifest.settings.collation),
  };
  // sirv's dev mode looks each file up when asked instead of walking the whole tree at start:
  // a large site holds hundreds of thousands of files, and hot ones are cached (FileCache).
  const files = sirv(dir, {
    dev: true,
    etag: true,
    gzip: true,
    brotli: true,
    extensions: [],
    // The reference sends `Vary: Accept` only; it is kept exactly (see docs on caching).
    setHeaders: (res) => res.setHeader(ROUTES.header.vary, ROUTES.headers.Vary),
  });
  return { manifest, context, files, cache: new FileCache(files, JSON_HEADERS) };
}
