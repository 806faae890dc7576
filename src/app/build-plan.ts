import { CityIndex } from '../core/city-index.js';
import { CitiesApiError } from '../core/errors.js';
import { answerListing, bodyBytes } from '../core/page.js';
import { DEFAULT_PAGE_SIZE } from '../core/paginate.js';
import { ROUTES } from '../core/route-table.js';
import { datasetDigest, readDataset } from '../dataset/read-dataset.js';
import { sha256 } from '../fs/file-output.js';
import { checkLiveUrl } from '../hosts/live-url.js';
import { firstPagesFor } from '../site/asset-budget.js';
import { specOf, type ManifestHead } from '../site/manifest.js';
import {
  countSiteFiles,
  DEFAULT_MAX_FILES,
  estimateSiteSize,
  reusableShape,
  tooManyFilesAdvice,
  type Sized,
} from '../site/size.js';
import {
  DEFAULT_BASE_URL,
  DEFAULT_COLLATION,
  DEFAULT_COMPRESSION,
  DEFAULT_PAGE_SIZES,
  normalizeBaseUrl,
  parseCompression,
  parseHost,
  parseOrderings,
  parsePageSizes,
  type Host,
  siteSpec,
  type Compression,
  type CompressionLevel,
  type SiteSettings,
  type SiteSpec,
} from '../site/spec.js';
import { VERSION } from '../site/version.js';
import { compressedRatio } from '../store/compression.js';
import { checkFreeSpace } from '../store/disk-space.js';
import { readManifestHead } from '../store/manifest-file.js';
import { startSiteCheck, type PendingCheck } from '../store/site-check.js';
import { checkSiteLocation, resolveSiteDir } from '../store/site-path.js';
import { StatCache, type DatasetRecord } from '../store/stat-cache.js';
import type { BuildOptions, BuildPlan, SiteBuildOptions } from './build-options.js';
import { HeldIndex } from './site-entries.js';

// A build's first half: what it will write, decided before anything is (build.ts writes it).
// Refusals (a bad location, too many files, too little space) come from here.

/** What a build decided: the plan it announces and returns, and unless the site is up to date, what it writes. */
export interface PlannedBuild {
  readonly plan: BuildPlan;
  readonly write?: PendingWrite;
}

/** What the writer is given besides the plan. */
export interface PendingWrite {
  /** The dataset's index, held until the site's entries take it. */
  readonly data: HeldIndex;
  readonly spec: SiteSpec;
  readonly manifest: ManifestHead;
  /** The dataset file's digest and its cities' JSON bytes, recorded beside the site. */
  readonly digest: Uint8Array | undefined;
  readonly cityBytes: number;
  /** Bytes of free space the build leaves on the disk. */
  readonly minFree: number;
}

/** The site directory as found, and its manifest. */
interface Previous {
  readonly out: string;
  readonly old: ManifestHead | null;
}

export async function planBuild(options: SiteBuildOptions): Promise<PlannedBuild> {
  const settings = settingsOf(options);
  const out = await resolveSiteDir(options.out);
  await checkSiteLocation({ out, data: options.data, cwd: options.cwd ?? process.cwd() });
  const old = await readManifestHead(out).catch(() => null);
  // A site for one host holds as many first pages as its dataset allows: the same dataset file, the same number.
  const early = old?.settings.host && old.settings.host === settings.host ? budgeted(settings, old.settings) : settings;
  const sameSettings = !options.force && !!old && sameInput(old, manifestHead(early, old.dataset));
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
      const spec = siteSpec(early, old.dataset.count);
      checkMaxFiles(spec, options);
      const size = sizeOf(early, old.dataset.count, record.cityBytes, 0);
      const defaultBaseUrl = options.baseUrl === undefined;
      return { plan: { cities: old.dataset.count, ...size(spec), upToDate: true, check, dir: out, defaultBaseUrl } };
    }
  }
  // Awaited here: `pending` is disposed when this function returns.
  return await planFromDataset(options, settings, { out, old }, pending);
}

/** The plan once the dataset is read and validated: the site's files checked when its input is the site's. */
async function planFromDataset(
  options: BuildOptions,
  asked: SiteSettings,
  { out, old }: Previous,
  pending: PendingCheck | null,
): Promise<PlannedBuild> {
  let digest: Uint8Array | undefined;
  const table = await readDataset(options.data, {
    shownAs: options.dataName,
    strict: options.strict,
    onWarning: options.onWarning,
    onProgress: options.onRead,
    signal: options.signal,
    onDigest: (d) => (digest = d),
  });
  const { count } = table;
  const cityBytes = table.jsonBytes();
  const settings = asked.host
    ? budgeted(asked, { firstPages: firstPagesFor(asked.host, { ...asked, count }, cityBytes) })
    : asked;
  const spec = siteSpec(settings, count);
  checkMaxFiles(spec, options);
  const manifest = manifestHead(settings, { count, sha256: sha256(table.datasetParts()) });
  // (Settings the same once the dataset's first pages are known: then the dataset is too.)
  const check =
    !options.force && sameInput(old, manifest)
      ? await (pending ?? startSiteCheck(out, countSiteFiles(spec))).result()
      : (pending?.cancel(), null);
  const upToDate = !!check && !check.unverified && !check.changed.length;
  const data = new HeldIndex(new CityIndex(table, settings.collation));
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
  if (upToDate) return { plan };
  const reusable = old && !options.force ? reusableShape(specOf(old), spec) : null;
  const minFree = await checkFreeSpace(out, plan, reusable && size(reusable), options.minFree);
  return { plan, write: { data, spec, manifest, digest, cityBytes, minFree } };
}

/** The settings the options ask for, defaults filled in (a site for one host: its first pages not yet known). */
function settingsOf(options: BuildOptions): SiteSettings {
  const host = options.host === undefined ? undefined : parseHost(options.host);
  return {
    baseUrl: normalizeBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL),
    collation: options.collation ?? DEFAULT_COLLATION,
    pageSizes: parsePageSizes(options.pageSizes ?? DEFAULT_PAGE_SIZES),
    orderings: parseOrderings(options.orderings ?? 'all'),
    defaultPageSize: DEFAULT_PAGE_SIZE,
    compression: host ? hostCompression(host, options) : compressionOf(options),
    liveUrl: options.liveUrl ? checkLiveUrl(options.liveUrl) : null,
    ...(host ? { host } : {}),
  };
}

/** A site for one host with its first pages (last in the settings, as the manifest records them), if not every page. */
function budgeted(settings: SiteSettings, { firstPages }: Pick<SiteSettings, 'firstPages'>): SiteSettings {
  return firstPages === undefined ? settings : { ...settings, firstPages };
}

/** A host that compresses by itself (Cloudflare) takes no `.gz`/`.br`: asking for them contradicts --for. */
function hostCompression(host: Host, options: Pick<BuildOptions, 'compression' | 'compress'>): Compression {
  const level = compressionOf(options);
  if (options.compression !== undefined && level !== 'none')
    throw new CitiesApiError(
      `--for ${host} builds no .gz/.br (${host} compresses by itself), and --compression ${level} asks for them: drop --compression`,
      2,
    );
  return 'none';
}

/** The manifest (without its files) of a site built here, now, with these settings from this dataset. */
function manifestHead(settings: SiteSettings, dataset: ManifestHead['dataset']): ManifestHead {
  return {
    generator: 'cities-api',
    version: VERSION,
    settings,
    dataset,
    runtime: {
      icu: process.versions.icu ?? 'none',
      cldr: process.versions.cldr ?? 'none',
      unicode: process.versions.unicode ?? 'none',
    },
  };
}

/** The site's dataset record, when the dataset file has the very bytes it records. */
async function sameDatasetFile(record: DatasetRecord, options: BuildOptions): Promise<DatasetRecord | null> {
  const digest = await datasetDigest(options.data, {
    shownAs: options.dataName,
    onProgress: options.onRead,
    signal: options.signal,
  });
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
