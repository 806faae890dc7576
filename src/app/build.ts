import { stat } from 'node:fs/promises';
import type { BuildOptions, BuildPlan, BuildResult } from './build-options.js';
import { VERSION } from '../site/version.js';
import { buildInThread } from './build-thread.js';
import { CityIndex } from '../core/city-index.js';
import type { CityTable } from '../core/city-table.js';
import { SiteData, siteEntries } from './site-entries.js';
import { ROUTES } from '../core/route-table.js';
import { specOf, type ManifestHead } from '../site/manifest.js';
import { readManifestHead } from '../store/manifest-file.js';
import { siteSpec, type SiteSettings, type SiteSpec } from '../site/spec.js';
import { CitiesApiError } from '../core/errors.js';
import { DEFAULT_PAGE_SIZE } from '../core/paginate.js';
import { datasetDigest, readDataset } from '../dataset/read-dataset.js';
import {
  DEFAULT_BASE_URL,
  DEFAULT_COLLATION,
  DEFAULT_COMPRESSION,
  DEFAULT_PAGE_SIZES,
  normalizeBaseUrl,
  parseCompression,
  parseOrderings,
  parsePageSizes,
  type Compression,
  type CompressionLevel,
} from '../site/spec.js';
import { siteDirectories } from '../site/layout.js';
import { edgeFileCount } from '../site/edge-files.js';
import {
  countSiteFiles,
  DEFAULT_MAX_FILES,
  estimateSiteSize,
  reusableShape,
  tooManyFilesAdvice,
  type Sized,
} from '../site/size.js';
import { checkFreeSpace, SpaceGuard } from '../store/disk-space.js';
import { startSiteCheck } from '../store/site-check.js';
import { checkSiteLocation, resolveSiteDir, SITE_ROLE } from '../store/site-path.js';
import { fileSystemError } from '../fs/fs-error.js';
import { sha256 } from '../fs/file-output.js';
import { checkLiveUrl } from '../hosts/live-url.js';
import { compressedRatio } from '../store/compression.js';
import { answerListing, bodyBytes } from '../core/page.js';
import { tidySite, writeSite } from '../store/site-writer.js';
import { StatCache, type DatasetRecord } from '../store/stat-cache.js';

export type { BuildOptions, BuildPlan, BuildResult } from './build-options.js';

/**
 * Reads and validates the dataset, then writes every precomputed page of the site. A file system
 * failure (no permission, a file where a directory should be...) is a CitiesApiError naming the path.
 */
export async function build(options: BuildOptions): Promise<BuildResult> {
  const bytes = await stat(options.data).then(
    (s) => s.size,
    () => 0,
  );
  return bytes >= THREAD_FROM ? buildInThread<BuildPlan, BuildResult>(options) : buildHere(options);
}

// Datasets from this size are built in a thread of their own (build-thread.ts: its young
// generation capped, about 30 MB less at 140,000 cities); below it, starting the thread (about
// 70 ms) would cost more than the build, whose heap stays small anyway.
const THREAD_FROM = 1024 * 1024;

/** build() in this thread. */
export async function buildHere(options: BuildOptions): Promise<BuildResult> {
  return buildSite(options).catch(async (error: unknown) => {
    if (options.signal?.aborted)
      throw new CitiesApiError(
        `interrupted: the site ${options.out} was left as it was (the files written so far were removed)`,
      );
    throw await fileSystemError(error, SITE_ROLE, options.out);
  });
}

async function buildSite(options: BuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const settings: SiteSettings = {
    baseUrl: normalizeBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL),
    collation: options.collation ?? DEFAULT_COLLATION,
    pageSizes: parsePageSizes(options.pageSizes ?? DEFAULT_PAGE_SIZES),
    orderings: parseOrderings(options.orderings ?? 'all'),
    defaultPageSize: DEFAULT_PAGE_SIZE,
    compression: compressionOf(options),
    liveUrl: options.liveUrl ? checkLiveUrl(options.liveUrl) : null,
  };
  const out = await resolveSiteDir(options.out);
  await checkSiteLocation({ out, data: options.data, cwd: options.cwd ?? process.cwd() });
  const manifestOf = (dataset: ManifestHead['dataset']): ManifestHead => ({
    generator: 'cities-api',
    version: VERSION,
    settings,
    dataset,
    runtime: {
      icu: process.versions.icu ?? 'none',
      cldr: process.versions.cldr ?? 'none',
      unicode: process.versions.unicode ?? 'none',
    },
  });
  const old = await readManifestHead(out).catch(() => null);
  const sameSettings = !options.force && !!old && sameInput(old, manifestOf(old.dataset));
  // The very dataset file the site was built from (its digest recorded beside the site): its cities
  // are the site's, so if its files are as built there is nothing to validate, compute or write.
  const known = sameSettings ? await StatCache.readDataset(out) : null;
  const record = known && (await sameDatasetFile(known, options));
  // That file, or no record of one: the site's files are checked on another thread meanwhile (the
  // check needs only the old site). Another file most likely holds other cities: no check is
  // started before they are known the same (it would only compete with the parsing).
  using pending = old && sameSettings && (record || !known) ? startSiteCheck(out, countSiteFiles(specOf(old))) : null;
  if (old && pending && record) {
    const check = await pending.result();
    if (!check.unverified && !check.changed.length) {
      const spec = siteSpec(settings, old.dataset.count);
      checkMaxFiles(spec, options);
      const size = sizeOf(settings, old.dataset.count, record.cityBytes, 0);
      return upToDateBuild(
        {
          cities: old.dataset.count,
          ...size(spec),
          upToDate: true,
          check,
          dir: out,
          defaultBaseUrl: options.baseUrl === undefined,
        },
        options,
        started,
      );
    }
  }
  let digest: Uint8Array | undefined;
  // Not a const: an async function keeps its consts until it returns, and the site's pages of
  // every city written, the dataset is let go (siteEntries) before the other pages are.
  let table: CityTable | undefined = await readDataset(options.data, {
    onProgress: options.onRead,
    signal: options.signal,
    onDigest: (d) => (digest = d),
  });
  const { count } = table;
  const cityBytes = table.jsonBytes();
  const spec = siteSpec(settings, count);
  checkMaxFiles(spec, options);
  const manifest = manifestOf({ count, sha256: sha256(table.datasetParts()) });
  const check =
    sameSettings && sameInput(old, manifest)
      ? await (pending ?? startSiteCheck(out, countSiteFiles(spec))).result()
      : (pending?.cancel(), null);
  const upToDate = !!check && !check.unverified && !check.changed.length;
  const data = new SiteData(new CityIndex(table, settings.collation));
  table = undefined;
  // Sampling compression sorts an ordering: only worth it when pages are to be built.
  const ratio =
    settings.compression !== 'none' && !upToDate
      ? sampleCompressedRatio(data.index, settings, settings.compression)
      : 0;
  const size = sizeOf(settings, count, cityBytes, ratio);
  const plan: BuildPlan = {
    cities: count,
    ...size(spec),
    upToDate,
    check,
    dir: out,
    defaultBaseUrl: options.baseUrl === undefined,
  };
  if (upToDate) return upToDateBuild(plan, options, started);
  const reusable = old && !options.force ? reusableShape(specOf(old), spec) : null;
  const minFree = await checkFreeSpace(out, plan, reusable && size(reusable), options.minFree);
  options.onStart?.(plan);
  const { pages } = plan;
  // The edge data's tag: what its ranks and chunks follow from (the cities, the collation and ICU's data).
  const tag = sha256(JSON.stringify([manifest.dataset.sha256, settings.collation, manifest.runtime])).slice(0, 16);
  const stats = await writeSite(out, untilAborted(siteEntries(data, spec, tag), options.signal), manifest, {
    force: options.force,
    guard: new SpaceGuard(out, minFree),
    directories: siteDirectories(spec),
    dataset: digest && { digest, cityBytes },
    // The edge files and the dataset come first: pages done are the entries done past them.
    onProgress: (done) =>
      options.onProgress?.(Math.max(0, Math.min(done - edgeFileCount(count, cityBytes) - 1, pages)), pages),
  });
  return { ...plan, ...stats, seconds: (performance.now() - started) / 1000 };
}

/** The site's dataset record, when the dataset file has the very bytes it records. */
async function sameDatasetFile(record: DatasetRecord, options: BuildOptions): Promise<DatasetRecord | null> {
  const digest = await datasetDigest(options.data, { onProgress: options.onRead, signal: options.signal });
  return Buffer.from(record.digest).equals(digest) ? record : null;
}

function checkMaxFiles(spec: SiteSpec, options: BuildOptions): void {
  const maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
  if (countSiteFiles(spec) > maxFiles) throw new CitiesApiError(tooManyFilesAdvice(spec, maxFiles), 2);
}

/** The size of a site (or of part of it: `of`) estimated from its cities' JSON bytes and the compression ratio. */
function sizeOf(
  settings: SiteSettings,
  cities: number,
  cityBytes: number,
  ratio: number,
): (of: Sized) => ReturnType<typeof estimateSiteSize> {
  return (of) => estimateSiteSize(of, (cityBytes * of.count) / Math.max(1, cities), settings.baseUrl.length, ratio);
}

/** A site with nothing to write: killed builds' leftovers tidied, the plan said. */
async function upToDateBuild(plan: BuildPlan, options: BuildOptions, started: number): Promise<BuildResult> {
  options.onStart?.(plan);
  await tidySite(plan.dir);
  return {
    ...plan,
    written: 0,
    unchanged: plan.files,
    removed: 0,
    kept: [],
    seconds: (performance.now() - started) / 1000,
  };
}

/** The level the options ask for; the older `compress: false` is `none`, and contradicts any other. */
function compressionOf(options: Pick<BuildOptions, 'compression' | 'compress'>): Compression {
  const level = options.compression === undefined ? undefined : parseCompression(options.compression);
  if (options.compress !== false) return level ?? DEFAULT_COMPRESSION;
  if (level !== undefined && level !== 'none') {
    throw new CitiesApiError(
      `--no-compress (compress: false) asks for no .gz/.br, --compression ${level} for them: give only --compression (none, fast or best)`,
      2,
    );
  }
  return 'none';
}

/** The compression ratio of the first page at each page size, weighted alike (each size holds every city once). */
function sampleCompressedRatio(index: CityIndex, settings: SiteSettings, level: CompressionLevel): number {
  const sizes = [DEFAULT_PAGE_SIZE, ...settings.pageSizes].map((size) => Math.min(size, 1000));
  const ratios = sizes.map((size) =>
    compressedRatio(
      bodyBytes(answerListing(index, [[ROUTES.param.pageSize, String(size)]], settings.baseUrl).body),
      level,
    ),
  );
  return ratios.reduce((a, b) => a + b, 0) / ratios.length;
}

/** Whether a site was built from this very input (same generator version, settings, dataset bytes and ICU/Unicode data). */
function sameInput(site: ManifestHead | null, manifest: ManifestHead): boolean {
  return !!site && JSON.stringify(site) === JSON.stringify(manifest);
}

/** The entries, until the signal aborts: the writer then fails, removing what it wrote. */
async function* untilAborted<T>(entries: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  for await (const entry of entries) {
    signal?.throwIfAborted();
    yield entry;
  }
}
