// The lib/ modules the edge benchmarks (bench-edge.mjs, bench-cloudflare-reads.mjs) share: build
// a site, read its dataset and manifest, check an edge answer against answerListing, count what
// Cloudflare publishes. Compiled code: `npm run build` first.
import { join } from 'node:path';

/** A module of lib/ by its path there. */
export const lib = (path) => import(join(import.meta.dirname, '..', '..', 'lib', path));

export const [
  { readDataset },
  { CityIndex },
  { answerListing, bodyBytes },
  { parseQuery },
  { build },
  { readManifestHead },
  { planAssets },
  { CLOUDFLARE_FREE },
] = await Promise.all(
  [
    'dataset/read-dataset.js',
    'core/city-index.js',
    'core/page.js',
    'core/query-string.js',
    'app/build.js',
    'store/manifest-file.js',
    'platforms/cloudflare/assets.js',
    'site/asset-budget.js',
  ].map(lib),
);
