import { statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { ROUTES } from '../../core/route-table.js';
import type { AssetLimits } from '../../site/asset-budget.js';
import type { Figure } from '../limits.js';

// What of a site a Worker publishes as its assets, within Cloudflare's limits on asset files (the
// figures of ./recipe.ts's table, which says where they come from). Always the edge data (the
// Worker computes every other answer from it); never the .gz/.br (Cloudflare compresses by itself)
// nor the site's own files; then, within what is left of the file budget, the first pages of every
// precomputed list, which are what most clients ask for (a list is read from its start; deep pages
// are reached page by page). A site whose edge data alone is over a limit gets the smallest plan,
// which the recipe's check refuses.

interface Sized {
  readonly path: string;
  readonly size: number;
}

export interface AssetPlan {
  /** The .assetsignore text (gitignore rules, as wrangler reads them). */
  readonly ignore: string;
  /** Files published, their bytes and the largest, and the first pages of each list among them (Infinity: every page). */
  readonly files: number;
  readonly bytes: number;
  /** The largest file published whatever the budget (the edge data, the site's other files): pages over the limit are left out. */
  readonly largest: Figure;
  readonly pagesPerList: number;
  /** What wrangler will make of a site not built for Cloudflare (`build --for cloudflare`), if anything. */
  readonly warnings: readonly string[];
}

/** Budgets of first pages tried, largest first: every page, then 1..K for K of the form c·10^m − 1. */
const PAGE_BUDGETS = [Infinity, 999, 499, 199, 99, 49, 19, 9, 4, 1, 0];

export async function planAssets(site: string, limits: AssetLimits): Promise<AssetPlan> {
  const entries = await readdir(site, { recursive: true, withFileTypes: true });
  const always: Sized[] = [];
  const tooLarge: string[] = [];
  const pages: (Sized & { readonly page: number })[] = [];
  const otherHosts: string[] = [];
  let siteFiles = 0;
  for (const e of entries) {
    if (!e.isFile()) continue;
    siteFiles++;
    const path = relative(site, join(e.parentPath, e.name)).split(sep).join('/');
    if (path === ROUTES.extras.netlifyRedirects || path === ROUTES.extras.netlifyHeaders) {
      otherHosts.push(path);
      continue;
    }
    if (/\.(gz|br)$/.test(path) || path.startsWith('.')) continue;
    if (path.startsWith(`${ROUTES.file.meta}/`) && !path.startsWith(`${ROUTES.edge.dir}/`)) continue;
    // Synchronously: one stat per file of the site, 20k files 0.21 CPU-s against 0.8-1.4 awaited one at a time.
    const { size } = statSync(join(site, path));
    if (size > limits.fileBytes && !path.startsWith(`${ROUTES.edge.dir}/`)) {
      tooLarge.push(path);
      continue;
    }
    const page = /^cities\/[^/]+\/[^/]+\/(\d+)\.json$/.exec(path);
    if (page) pages.push({ path, size, page: Number(page[1]) });
    else always.push({ path, size });
  }
  const largest = always.reduce<Figure>((a, f) => (a.value >= f.size ? a : { value: f.size, of: f.path }), {
    value: 0,
  });
  const plan = (budget: number) => {
    const published = [...always, ...pages.filter((p) => p.page <= budget)];
    return {
      ignore: ignoreText(budget, tooLarge.sort()),
      files: published.length,
      bytes: published.reduce((n, f) => n + f.size, 0),
      largest,
      pagesPerList: budget,
      warnings: wranglerWarnings(otherHosts.sort(), siteFiles, limits),
    };
  };
  for (const budget of PAGE_BUDGETS) {
    const files = always.length + pages.filter((p) => p.page <= budget).length;
    if (files <= limits.files) return plan(budget);
  }
  return plan(0);
}

/**
 * Whatever .assetsignore says, wrangler reads the site's `_redirects` and `_headers` as Cloudflare's
 * rules (Netlify's query conditions are not: a warning per rule in wrangler dev), and its dev
 * server watches every file of the site (one inotify watch each: at 140,000 cities a default site's
 * 3.76 million files exhaust Linux's default of 8,192 to 524,288 watches per user).
 */
function wranglerWarnings(otherHosts: readonly string[], siteFiles: number, limits: AssetLimits): string[] {
  const why = [
    ...(otherHosts.length ? [`Netlify's ${otherHosts.join(' and ')}, which wrangler reads as Cloudflare's rules`] : []),
    ...(siteFiles > limits.files
      ? [`${siteFiles.toLocaleString('en')} files, each watched by wrangler dev (one inotify watch a file)`]
      : []),
  ];
  if (!why.length) return [];
  return [
    `the site holds ${why.join(', and ')}: rebuild it for Cloudflare alone (cities-api build --for cloudflare), which writes neither`,
  ];
}

function ignoreText(budget: number, tooLarge: readonly string[]): string {
  const lines = [
    `${ROUTES.file.meta}/*`,
    `!${ROUTES.edge.dir}/`,
    ROUTES.extras.netlifyRedirects,
    ROUTES.extras.netlifyHeaders,
    '.*.stat-cache',
    '*.gz',
    '*.br',
    // The page of all cities is named after their count: matched by any, so that the rules hold after a data change.
    ...new Set(tooLarge.map((f) => `/${f.replace(/\/all-\d+\.json$/, '/all-*.json')}`)),
  ];
  const pages = `/${ROUTES.file.dir}/*/*`;
  if (budget !== Infinity) lines.push(`${pages}/*.json`, ...firstPages(budget).map((p) => `!${pages}/${p}.json`));
  return `${lines.join('\n')}\n`;
}

/** Glob patterns naming the numbers 1..k (k of the form c·10^m − 1). */
export function firstPages(k: number): string[] {
  if (k < 1) return [];
  const digits = String(k + 1).length - 1;
  const lead = Number(String(k + 1)[0]);
  const patterns = Array.from({ length: digits }, (_, d) => `[1-9]${'[0-9]'.repeat(d)}`);
  if (lead > 1) patterns.push(`[1-${lead - 1}]${'[0-9]'.repeat(digits)}`);
  return patterns;
}
