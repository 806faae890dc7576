import { createRequire } from 'node:module';
import { CityIndex } from './city-index.js';
import type { Collation } from './collation.js';
import { hostingSettings, NOT_PRECOMPUTED_PATH, notPrecomputedJson, type HostingSettings } from './hosting.js';
import { DATASET_PATH, type SiteSettings } from './manifest.js';
import { netlifyHeaders, netlifyRedirects } from './netlify-files.js';
import { openApiDocument } from './openapi.js';
import { DEFAULT_PAGE_SIZE } from './paginate.js';
import { readDataset } from './read-dataset.js';
import { normalizeBaseUrl, parseOrderings, parsePageSizes } from './settings.js';
import { countPageFiles, pageFiles } from './site-files.js';
import { sha256 } from './file-output.js';
import { writeSite, type SiteEntry, type WriteStats } from './site-writer.js';

export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

export interface BuildOptions {
  /** Dataset file, `.csv` or `.json`. */
  readonly data: string;
  /** Site directory to (re)build. */
  readonly out: string;
  readonly baseUrl: string;
  readonly collation: Collation;
  readonly pageSizes: readonly number[];
  /** Orderings to precompute (default: all 33). */
  readonly orderings?: readonly string[] | undefined;
  /** Write `.gz`/`.br` next to each page (default true). */
  readonly compress?: boolean;
  /** The live server (`cities-api serve`) static hosts send what no file covers to. */
  readonly liveUrl?: string | undefined;
  /** Called once the dataset is valid, before anything is written. */
  readonly onStart?: (plan: BuildPlan) => void;
  readonly onProgress?: (pagesDone: number, pages: number) => void;
}

export interface BuildPlan {
  readonly cities: number;
  readonly pages: number;
  /** Files the site will hold, compressed siblings included. */
  readonly files: number;
}

export interface BuildResult extends WriteStats, BuildPlan {
  readonly seconds: number;
}

/** Reads and validates the dataset, then writes every precomputed page of the site. */
export async function build(options: BuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const settings: SiteSettings = {
    baseUrl: normalizeBaseUrl(options.baseUrl),
    collation: options.collation,
    pageSizes: parsePageSizes(options.pageSizes),
    orderings: parseOrderings(options.orderings ?? 'all'),
    defaultPageSize: DEFAULT_PAGE_SIZE,
    compress: options.compress ?? true,
    liveUrl: options.liveUrl ? normalizeBaseUrl(options.liveUrl) : null,
  };
  const table = await readDataset(options.data);
  const pages = countPageFiles(table.count, settings.pageSizes, settings.orderings.length);
  const plan: BuildPlan = { cities: table.count, pages, files: pages * (settings.compress ? 3 : 1) + 2 + HOSTING_FILES };
  options.onStart?.(plan);
  const dataset = table.datasetParts();
  const manifest = {
    generator: 'cities-api',
    version: VERSION,
    settings,
    dataset: { count: table.count, sha256: sha256(dataset) },
  };
  const hosting = hostingSettings(manifest);
  const stats = await writeSite(options.out, siteEntries(new CityIndex(table, settings.collation), settings, dataset, hosting), manifest, {
    compress: settings.compress,
    onProgress: (done) => options.onProgress?.(Math.min(done, pages), pages),
  });
  return { ...plan, ...stats, seconds: (performance.now() - started) / 1000 };
}

const HOSTING_FILES = 4;

function* siteEntries(index: CityIndex, settings: SiteSettings, dataset: Iterable<Buffer>, hosting: HostingSettings): Generator<SiteEntry> {
  for (const file of pageFiles(index, settings)) yield { ...file, compress: true };
  yield { path: DATASET_PATH, body: dataset };
  // What static hosts need: Netlify's routing and headers, the OpenAPI description, and the
  // honest answer of a host without a live server.
  yield { path: '_redirects', body: netlifyRedirects(hosting) };
  yield { path: '_headers', body: netlifyHeaders(hosting) };
  yield { path: 'openapi.json', body: `${JSON.stringify(openApiDocument(hosting), null, 2)}\n` };
  yield { path: NOT_PRECOMPUTED_PATH, body: notPrecomputedJson(settings.pageSizes) };
}
