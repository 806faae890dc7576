import { CityIndex } from '../core/city-index.js';
import { datasetDigest, readDataset } from '../dataset/read-dataset.js';
import { sha256 } from '../fs/file-output.js';
import { cloudFrontLeftOut } from '../hosts/cloudfront-origin.js';
import { netlifyLeftOut } from '../hosts/netlify.js';
import { hostBudget } from '../site/asset-budget.js';
import { specOf, type ManifestHead } from '../site/manifest.js';
import { countSiteFiles } from '../site/size.js';
import { reusableShape } from '../site/reusable.js';
import { siteSpec, type SiteSettings, type SiteSpec } from '../site/spec.js';
import { checkFreeSpace } from '../store/disk-space.js';
import { readManifestHead } from '../store/manifest-file.js';
import { startSiteCheck, type PendingCheck } from '../store/site-check.js';
import { checkSiteLocation, resolveSiteDir } from '../store/site-path.js';
import { StatCache } from '../store/stat-cache.js';
import { isDurable, isUnsynced } from '../store/durable-marks.js';
import type { DatasetRecord } from '../store/stat-cache-format.js';
import type { BuildOptions, BuildPlan, SiteBuildOptions } from './build-options.js';
import { budgeted, manifestHead, sameInput, settingsOf } from './build-settings.js';
import { checkMaxFiles, sampleCompressedRatio, sizeOf } from './build-size.js';
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
  /** Reuse nothing of the old site (--force, or a durable build of a site published unsynced). */
  readonly force: boolean;
}

/** The site directory as found, and its manifest. */
interface Previous {
  readonly out: string;
  readonly old: ManifestHead | null;
  /** A durable build of a site no durable build published: never up to date. */
  readonly resync: boolean;
}

export async function planBuild(given: SiteBuildOptions): Promise<PlannedBuild> {
  const settings = settingsOf(given);
  // Said before anything is read, by every build of such a site (an up-to-date one too).
  for (const leftOut of [netlifyLeftOut(settings), cloudFrontLeftOut(settings)])
    if (leftOut) given.onWarning?.(leftOut);
  const out = await resolveSiteDir(given.out);
  // A site a durable build published without its syncs done is written whole by the next durable one.
  const force = given.force || (!!given.durable && (await isUnsynced(out)));
  // One no durable build published (or not whole) is not up to date for a durable build: its files get synced.
  const resync = !!given.durable && !force && !(await isDurable(out));
  const options = { ...given, force };
  await checkSiteLocation({ out, data: options.data, cwd: options.cwd ?? process.cwd() });
  const old = await readManifestHead(out).catch(() => null);
  // A site for one host holds as many first pages as its dataset allows: the same dataset file, the same number.
  const early = old?.settings.host && old.settings.host === settings.host ? budgeted(settings, old.settings) : settings;
  const sameSettings = !options.force && !resync && !!old && sameInput(old, manifestHead(early, old.dataset));
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
  return await planFromDataset(options, settings, { out, old, resync }, pending);
}

/** The plan once the dataset is read and validated: the site's files checked when its input is the site's. */
async function planFromDataset(
  options: BuildOptions,
  asked: SiteSettings,
  { out, old, resync }: Previous,
  pending: PendingCheck | null,
): Promise<PlannedBuild> {
  let digest: Uint8Array | undefined;
  const read = await readDataset(options.data, {
    shownAs: options.dataName,
    strict: options.strict,
    onWarning: options.onWarning,
    onProgress: options.onRead,
    signal: options.signal,
    onDigest: (d) => (digest = d),
  });
  const index = new CityIndex(read, asked.collation).inDefaultOrder();
  const { table } = index;
  const { count } = table;
  const cityBytes = table.jsonBytes();
  const settings = asked.host ? budgeted(asked, hostBudget(asked.host, siteSpec(asked, count), index)) : asked;
  const spec = siteSpec(settings, count);
  checkMaxFiles(spec, options);
  const manifest = manifestHead(settings, { count, sha256: sha256(table.datasetParts()) });
  // (Settings the same once the dataset's first pages are known: then the dataset is too.)
  const check =
    !options.force && !resync && sameInput(old, manifest)
      ? await (pending ?? startSiteCheck(out, countSiteFiles(spec))).result()
      : (pending?.cancel(), null);
  const upToDate = !!check && !check.unverified && !check.changed.length;
  const data = new HeldIndex(index);
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
  const reusable =
    old && !options.force ? reusableShape(specOf(old), spec, old.dataset.sha256 === manifest.dataset.sha256) : null;
  const minFree = await checkFreeSpace(out, plan, reusable && size(reusable), options.minFree);
  return { plan, write: { data, spec, manifest, digest, cityBytes, minFree, force: !!options.force } };
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
