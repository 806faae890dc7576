import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { planAssets } from './assets.js';
import { CLOUDFLARE_FREE } from '../../site/asset-budget.js';
import type { PlatformLimit } from '../limits.js';
import { entryModule, textFile, type EdgeRecipe } from '../recipe.js';
import { workerFirstRules } from './worker-first.js';

// `cities-api edge cloudflare`: a Worker with static assets. Ours: the bundle, the site's settings,
// and the site's .assetsignore (what of the site the Worker publishes, ./assets.ts). The user's:
// worker.js and wrangler.jsonc. Deployed with wrangler.

/** Workers' compatibility date: the runtime behaviour the Worker was tested with. */
const COMPATIBILITY_DATE = '2025-09-01';
const LIMITS_PAGE = 'Cloudflare Workers docs, "Limits" page';
const MiB = 1024 * 1024;

/** Cloudflare's limits on the Workers Free plan (the defaults; Workers Paid allows more, as said). */
export const CLOUDFLARE_LIMITS: readonly PlatformLimit[] = [
  {
    what: 'static asset files per Worker version (Workers Free; 100,000 on Workers Paid)',
    figure: CLOUDFLARE_FREE.files,
    unit: 'files',
    measure: 'files',
    source: LIMITS_PAGE,
    advice:
      'the edge data and the site files other than pages are always published (pages fill what is left): build the site with fewer --orderings',
  },
  {
    what: 'size of one static asset',
    figure: CLOUDFLARE_FREE.fileBytes,
    unit: 'bytes',
    measure: 'fileBytes',
    source: LIMITS_PAGE,
    advice: 'a page file over it is left to the Worker; an edge file over it is from an older build: rebuild the site',
  },
  {
    what: "Worker's code, compressed (Workers Free; 10 MB on Workers Paid)",
    figure: 3_000_000,
    unit: 'bytes',
    measure: 'codeBytes',
    source: LIMITS_PAGE,
    advice: 'the bundle is the same at any size of site: keep worker.js a few lines that import it',
  },
  {
    what: 'memory of an isolate',
    figure: 128 * MiB,
    unit: 'bytes',
    source: LIMITS_PAGE,
    advice: 'the Worker keeps only the edge files it read (rank files, up to 16 MB of blocks)',
  },
  {
    what: 'CPU time per request (Workers Free)',
    figure: 10,
    unit: 'ms',
    source: LIMITS_PAGE,
    advice:
      "a computed page of 100 takes 1-11 ms of the Worker's CPU, a page of every city at 140k cities about 1 s: on Workers Free, cap computed pages with maxPageCities in worker.js (a clear 500 above it); Workers Paid allows 30 s",
  },
];

/** worker.js's note on the one option a Workers Free account needs (docs/cloudflare.md, "Limits and cost"). */
const FREE_PLAN_HINT =
  '// On Workers Free (10 ms of CPU a request), cap the pages it computes: cloudflareWorker(site, { maxPageCities: 1000 })\n';

export const cloudflareRecipe: EdgeRecipe = {
  platform: 'cloudflare',
  title: 'Cloudflare Workers',
  limits: CLOUDFLARE_LIMITS,
  doc: 'docs/cloudflare.md',
  async project({ site, out, endpoint, code, limit, check }) {
    // First: a site that cannot take it fails the run before any file of the project is written.
    const plan = await planAssets(site, { files: limit('files'), fileBytes: limit('fileBytes') });
    const { files, siteDir } = code(out);
    const worker = textFile(
      join(out, 'worker.js'),
      entryModule('cloudflareWorker', `${FREE_PLAN_HINT}export default cloudflareWorker(site);\n`),
    );
    check({
      files: { value: plan.files },
      fileBytes: plan.largest,
      codeBytes: { value: gzipSync(Buffer.concat([...files, worker].map((f) => f.bytes))).length },
    });
    return {
      ours: [textFile(join(site, '.assetsignore'), plan.ignore), ...files],
      theirs: [worker, textFile(join(out, 'wrangler.jsonc'), wranglerConfig(siteDir.slice(0, -1), endpoint))],
      deploy: 'npx wrangler deploy',
      warnings: plan.warnings,
    };
  },
};

/** wrangler.jsonc: the site as the Worker's assets, the Worker first for the endpoint (asset routing ignores the query). */
export function wranglerConfig(assets: string, endpoint: string): string {
  const config = {
    name: 'cities-api',
    main: 'worker.js',
    compatibility_date: COMPATIBILITY_DATE,
    assets: { directory: assets, binding: 'ASSETS', run_worker_first: workerFirstRules(endpoint) },
  };
  return `// Written once by cities-api edge cloudflare; yours to edit (name, routes...: it is never rewritten). Deploy with npx wrangler deploy\n${JSON.stringify(config, null, 2)}\n`;
}
