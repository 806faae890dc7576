import { stat } from 'node:fs/promises';
import { CitiesApiError } from '../core/errors.js';
import { sha256 } from '../fs/file-output.js';
import { fileSystemError } from '../fs/fs-error.js';
import { siteSiblings, whileBusy } from '../fs/lock.js';
import { ROUTES } from '../core/route-table.js';
import { siteDirectories } from '../site/layout.js';
import { DEFAULT_OUT } from '../site/spec.js';
import { SpaceGuard } from '../store/disk-space.js';
import { resolveSiteDir, SITE_ROLE } from '../store/site-path.js';
import { readSiteFiles } from '../store/manifest-file.js';
import type { FileList } from '../fs/file-list.js';
import { tidySite } from '../store/site-recovery.js';
import { writeSite, type WriteStats } from '../store/site-writer.js';
import {
  type BuildOptions,
  type BuildPlan,
  type BuildResult,
  DEFAULT_LOCK_WAIT,
  type SiteBuildOptions,
  type SwapOutcome,
} from './build-options.js';
import { planBuild, type PendingWrite } from './build-plan.js';
import { buildInThread } from './build-thread.js';
import { previewRefusal } from './preview-guard.js';
import { buildCurrent, interruptedWaiting, swapIfAsRead } from './behind-site.js';
import { siteEntries } from './site-entries.js';
import { buildOptionsOf, inLibraryWords, type Reader } from './library-options.js';

export type { BuildOptions, BuildPlan, BuildResult, SiteBuildOptions } from './build-options.js';

/**
 * Reads and validates the dataset, then writes every precomputed page of the site. A file system
 * failure (no permission, a file where a directory should be...) is a CitiesApiError naming the path.
 */
export async function build(asked: BuildOptions): Promise<BuildResult> {
  return built(asked, 'library');
}

/** build() as the CLI calls it: its log lines and warnings name options marked, for the CLI to say as its flags (library-options.ts). */
export async function buildForCli(asked: BuildOptions): Promise<BuildResult> {
  return built(asked, 'cli');
}

function built(asked: BuildOptions, reader: Reader): Promise<BuildResult> {
  return buildChecked(asked, reader).catch((error: unknown) => Promise.reject(inLibraryWords('build', error)));
}

async function buildChecked(asked: BuildOptions, reader: Reader): Promise<BuildResult> {
  // Called from JavaScript too: what the types require is checked, what they leave out defaulted.
  const given = buildOptionsOf(asked, reader);
  if (typeof given?.data !== 'string' || given.data === '')
    throw new CitiesApiError('build() needs `data`: the path of the dataset file (.csv or .json)', 2);
  // The log: a function, which cannot cross to a build's thread.
  const { log = () => {}, ...rest } = given;
  const options: SiteBuildOptions = { ...rest, out: given.out ?? DEFAULT_OUT };
  // The dataset is the file plus the cities a writable server logged beside it (behind-site.ts).
  const around = {
    lockWait: options.lockWait ?? DEFAULT_LOCK_WAIT,
    log,
    dataName: options.dataName,
    signal: options.signal,
  };
  // Another build of the site (another process's, or this one's) is waited for as long as the dataset's lock.
  const { lock } = siteSiblings(await resolveSiteDir(options.out).catch(() => options.out));
  return buildCurrent(options.data, options.out, around, (swapCheck, siteLocked) =>
    siteLocked
      ? runBuild({ ...options, swapCheck, siteLocked })
      : whileBusy(() => runBuild({ ...options, swapCheck }), around.lockWait, lock, undefined, options.signal).catch(
          (error: unknown) => {
            // Ctrl-C while another build was waited for: nothing was written.
            if (!options.signal?.aborted || error instanceof CitiesApiError) throw error;
            throw interruptedWaiting(options.out);
          },
        ),
  );
}

/**
 * build() of the dataset file alone, with its site directory given and serve's options of its own (a preview's guard):
 * serve's builds (a writable server's writer folds its log and keeps the site's behind marker).
 */
export async function runBuild(options: SiteBuildOptions): Promise<BuildResult> {
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
export async function buildHere(options: SiteBuildOptions): Promise<BuildResult> {
  return buildSite(options).catch(async (error: unknown) => {
    if (options.signal?.aborted)
      throw new CitiesApiError(
        `interrupted: the site ${options.out} was left as it was (the files written so far were removed)`,
      );
    throw await fileSystemError(error, SITE_ROLE, options.out);
  });
}

/** The build planned (build-plan.ts), said, then written: or, up to date, killed builds' leftovers tidied. */
async function buildSite(options: SiteBuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const { plan, write } = await planBuild(options);
  options.onStart?.(plan);
  const stats = write ? await writePlanned(plan, write, options) : await tidyUpToDate(plan, options.siteLocked);
  return { ...plan, ...stats, seconds: (performance.now() - started) / 1000 };
}

/** The site's files written as planned: the edge files and the dataset first, then every page; and what its swap found. */
async function writePlanned(
  plan: BuildPlan,
  write: PendingWrite,
  options: SiteBuildOptions,
): Promise<WriteStats & Pick<BuildResult, 'sinceRead'>> {
  const { data, spec, manifest, digest, cityBytes, minFree } = write;
  const { dir, pages } = plan;
  // The edge data's tag: what its ranks and chunks follow from (the cities, the collation and ICU's data).
  const tag = sha256(JSON.stringify([manifest.dataset.sha256, spec.collation, manifest.runtime])).slice(0, 16);
  // The edge files and the dataset come first: pages done are the entries done past those seen so far.
  const notPages = { seen: 0 };
  const entries = countNotPages(untilAborted(siteEntries(data, spec, tag), options.signal), notPages);
  let sinceRead: SwapOutcome | undefined;
  const stats = await writeSite(dir, entries, manifest, {
    force: write.force,
    durable: options.durable,
    locked: options.siteLocked,
    guard: new SpaceGuard(dir, minFree),
    directories: siteDirectories(spec),
    dataset: digest && { digest, cityBytes },
    onWarning: options.onWarning,
    // A preview replaces no site built for deployment, checked again holding the site's lock.
    refuse: options.preview && ((old) => previewRefusal(options.preview!, old.settings)),
    // Swapped in only if the dataset is still what was read, under its lock (behind-site.ts).
    atSwap: options.swapCheck && (async (swap) => void (sinceRead = await swapIfAsRead(options.swapCheck!, dir, swap))),
    onProgress: (done) => options.onProgress?.(Math.max(0, Math.min(done - notPages.seen, pages)), pages),
  });
  return sinceRead ? { ...stats, sinceRead } : stats;
}

/** A site with nothing to write: killed builds' leftovers tidied (`locked`: its lock held by the caller). */
async function tidyUpToDate(plan: BuildPlan, locked: boolean | undefined): Promise<WriteStats> {
  await tidySite(plan.dir, locked);
  // The files as the manifest lists them (the plan's count is an estimate: the edge data's blocks follow the cities).
  const site = await readSiteFiles(plan.dir);
  const files = site ? filesOnDisk(site.files, site.settings.compression !== 'none') : plan.files;
  return { files, written: 0, unchanged: files, removed: 0, kept: [] };
}

const PAGES_DIR = `${ROUTES.file.dir}/`;
const isPage = (path: string) => path.startsWith(PAGES_DIR) && path !== ROUTES.extras.notPrecomputed;

/** Files a manifest's list stands for: each file, a page's `.gz` and `.br` when compressed, and the manifest. */
function filesOnDisk(list: FileList, compressed: boolean): number {
  let files = list.size + 1;
  if (compressed) for (let i = 0; i < list.size; i++) if (isPage(list.path(i))) files += 2;
  return files;
}

/** The entries, counting in `count.seen` those that are not pages (the edge data and the dataset, under _cities-api/). */
async function* countNotPages<T extends { path: string }>(entries: AsyncIterable<T>, count: { seen: number }) {
  for await (const entry of entries) {
    if (entry.path.startsWith(`${ROUTES.file.meta}/`)) count.seen++;
    yield entry;
  }
}

/** The entries, until the signal aborts: the writer then fails, removing what it wrote. */
async function* untilAborted<T>(entries: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  for await (const entry of entries) {
    signal?.throwIfAborted();
    yield entry;
  }
}
