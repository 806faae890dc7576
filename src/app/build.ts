import { stat } from 'node:fs/promises';
import { CitiesApiError } from '../core/errors.js';
import { sha256 } from '../fs/file-output.js';
import { fileSystemError } from '../fs/fs-error.js';
import { edgeFileCount } from '../site/edge-files.js';
import { siteDirectories } from '../site/layout.js';
import { SpaceGuard } from '../store/disk-space.js';
import { SITE_ROLE } from '../store/site-path.js';
import { tidySite, writeSite, type WriteStats } from '../store/site-writer.js';
import type { BuildOptions, BuildPlan, BuildResult } from './build-options.js';
import { planBuild, type PendingWrite } from './build-plan.js';
import { buildInThread } from './build-thread.js';
import { siteEntries } from './site-entries.js';

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

/** The build planned (build-plan.ts), said, then written: or, up to date, killed builds' leftovers tidied. */
async function buildSite(options: BuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const { plan, write } = await planBuild(options);
  options.onStart?.(plan);
  const stats = write ? await writePlanned(plan, write, options) : await tidyUpToDate(plan);
  return { ...plan, ...stats, seconds: (performance.now() - started) / 1000 };
}

/** The site's files written as planned: the edge files and the dataset first, then every page. */
async function writePlanned(plan: BuildPlan, write: PendingWrite, options: BuildOptions): Promise<WriteStats> {
  const { data, spec, manifest, digest, cityBytes, toFunction, minFree } = write;
  const { dir, pages } = plan;
  // The edge data's tag: what its ranks and chunks follow from (the cities, the collation and ICU's data).
  const tag = sha256(JSON.stringify([manifest.dataset.sha256, spec.collation, manifest.runtime])).slice(0, 16);
  return writeSite(dir, untilAborted(siteEntries(data, spec, tag, toFunction), options.signal), manifest, {
    force: options.force,
    guard: new SpaceGuard(dir, minFree),
    directories: siteDirectories(spec),
    dataset: digest && { digest, cityBytes },
    // The edge files and the dataset come first: pages done are the entries done past them.
    onProgress: (done) =>
      options.onProgress?.(Math.max(0, Math.min(done - edgeFileCount(spec.count, cityBytes) - 1, pages)), pages),
  });
}

/** A site with nothing to write: killed builds' leftovers tidied. */
async function tidyUpToDate(plan: BuildPlan): Promise<WriteStats> {
  await tidySite(plan.dir);
  return { files: plan.files, written: 0, unchanged: plan.files, removed: 0, kept: [] };
}

/** The entries, until the signal aborts: the writer then fails, removing what it wrote. */
async function* untilAborted<T>(entries: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  for await (const entry of entries) {
    signal?.throwIfAborted();
    yield entry;
  }
}
