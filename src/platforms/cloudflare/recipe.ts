import { join } from 'node:path';
import { planAssets } from './assets.js';
import { entryModule, posixRelative, textFile, type EdgeRecipe } from '../recipe.js';

// `cities-api edge cloudflare`: a Worker with static assets. Ours: the bundle, the site's settings,
// and the site's .assetsignore (what of the site the Worker publishes, ./assets.ts). The user's:
// worker.js and wrangler.jsonc. Deployed with wrangler.

/** Workers' compatibility date: the runtime behaviour the Worker was tested with. */
const COMPATIBILITY_DATE = '2025-09-01';

export const cloudflareRecipe: EdgeRecipe = {
  platform: 'cloudflare',
  async project({ site, out, endpoint, code }) {
    // First: a site that cannot take it fails the run before any file of the project is written.
    const assets = await planAssets(site);
    const ignore = textFile(join(site, '.assetsignore'), assets.ignore);
    return {
      ours: [ignore, ...code(out).files],
      theirs: [
        textFile(join(out, 'worker.js'), entryModule('cloudflareWorker', 'export default cloudflareWorker(site);\n')),
        textFile(join(out, 'wrangler.jsonc'), wranglerConfig(posixRelative(out, site), endpoint)),
      ],
      deploy: 'npx wrangler deploy',
      warnings: assets.warnings,
    };
  },
};

/** wrangler.jsonc: the site as the Worker's assets, the Worker first for the endpoint (asset routing ignores the query). */
export function wranglerConfig(assets: string, endpoint: string): string {
  const config = {
    name: 'cities-api',
    main: 'worker.js',
    compatibility_date: COMPATIBILITY_DATE,
    assets: { directory: assets, binding: 'ASSETS', run_worker_first: [endpoint.slice(0, -1), `${endpoint}*`] },
  };
  return `// Written once by cities-api edge cloudflare; yours to edit (name, routes...: it is never rewritten). Deploy with npx wrangler deploy\n${JSON.stringify(config, null, 2)}\n`;
}
