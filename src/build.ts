import { createRequire } from 'node:module';
import { CityIndex } from './city-index.js';
import type { Collation } from './collation.js';
import type { City } from './fields.js';
import { cityJson } from './json-text.js';
import { DATASET_PATH, type SiteSettings } from './manifest.js';
import { DEFAULT_PAGE_SIZE } from './paginate.js';
import { readDataset } from './read-dataset.js';
import { normalizeBaseUrl, parseOrderings, parsePageSizes } from './settings.js';
import { countPageFiles, pageFiles } from './site-files.js';
import { sha256, writeSite, type SiteEntry, type WriteStats } from './site-writer.js';

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
  };
  const cities = await readDataset(options.data);
  const pages = countPageFiles(cities.length, settings.pageSizes, settings.orderings.length);
  const plan: BuildPlan = { cities: cities.length, pages, files: pages * (settings.compress ? 3 : 1) + 2 };
  options.onStart?.(plan);
  const dataset = datasetJson(cities);
  const manifest = {
    generator: 'cities-api',
    version: VERSION,
    settings,
    dataset: { count: cities.length, sha256: sha256(dataset) },
  };
  const stats = await writeSite(options.out, siteEntries(new CityIndex(cities, settings.collation), settings, dataset), manifest, {
    compress: settings.compress,
    onProgress: (done) => options.onProgress?.(Math.min(done, pages), pages),
  });
  return { ...plan, ...stats, seconds: (performance.now() - started) / 1000 };
}

function* siteEntries(index: CityIndex, settings: SiteSettings, dataset: string): Generator<SiteEntry> {
  for (const file of pageFiles(index, settings)) yield { ...file, compress: true };
  yield { path: DATASET_PATH, body: dataset };
}

/** The validated dataset as the live fallback loads it: one city per line, in input order. */
export function datasetJson(cities: readonly City[]): string {
  return cities.length ? `[\n${cities.map(cityJson).join(',\n')}\n]\n` : '[]\n';
}
