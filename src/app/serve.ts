import { availableParallelism } from 'node:os';
import { CitiesApiError, optionNamed, wordingOf } from '../core/errors.js';
import { resolveLimits } from '../http/limits.js';
import { DEFAULT_OUT } from '../site/spec.js';
import { SiteBuilder } from './site-builder.js';
import { settingsWarningsOnce } from './settings-warnings.js';
import { coalesced, rebuildOnChange, watchDataset } from './dataset-watch.js';
import { checkWritable } from '../dataset/append-cities.js';
import { tokenProblems } from '../http/token-auth.js';
import type { RunningServer } from './front.js';
import { ServerPool } from './server-pool.js';
import { SiteServer, type SiteServers } from './site-server.js';
import { openWritable } from './writable.js';
import { besideAnotherSite, previewUrl } from './preview-guard.js';
import { markPreview } from './preview-marker.js';
import { inLibraryWords, type Reader, serveOptionsOf } from './library-options.js';
import { behindWarning, buildCurrent } from './behind-site.js';
import type { ServeOptions } from './serve-options.js';
import { DEFAULT_LOCK_WAIT, type SwapCheck } from './build-options.js';

export type { ServeOptions } from './serve-options.js';

export type { RunningServer } from './front.js';

/** Checks the options that need no I/O, and the token's strength (a warning when weak). */
function checkOptions(options: ServeOptions, log: (line: string) => void): void {
  if ((options.writable || options.watch) && !options.data)
    throw new CitiesApiError(
      `${optionNamed(options.writable ? 'writable' : 'watch')} needs a dataset file (${optionNamed('data')})`,
      2,
    );
  if (options.writable && !options.token)
    throw new CitiesApiError(`${optionNamed('writable')} needs a token: set ${optionNamed('token')}`, 2);
  if (options.writable) {
    const { error, warning } = tokenProblems(options.token!);
    if (error) throw new CitiesApiError(`${optionNamed('token')} ${error}`, 2);
    if (warning) log(`warning: ${optionNamed('token')} ${warning}`);
  }
}

/**
 * Starts the server: this process is the one writer (it builds, follows the dataset, takes POSTs)
 * in front of N HTTP servers: itself when N = 1 (site-server.ts), else N worker processes
 * (server-pool.ts). In order: the servers listen (requests wait until the site is open), the site
 * is built (site-builder.ts, with --data), the servers open it (following other processes'
 * builds), then the dataset is followed (--watch, dataset-watch.ts). Static files first (sirv),
 * everything else computed live from the same page function.
 */
export async function serve(asked: ServeOptions = {}): Promise<RunningServer> {
  return served(asked, 'library');
}

/** serve() as the CLI calls it: its log lines and warnings name options marked, for the CLI to say as its flags (library-options.ts). */
export async function serveForCli(asked: ServeOptions): Promise<RunningServer> {
  return served(asked, 'cli');
}

function served(asked: ServeOptions, reader: Reader): Promise<RunningServer> {
  return serveChecked(asked, reader).catch((error: unknown) => Promise.reject(inLibraryWords('serve', error)));
}

async function serveChecked(asked: ServeOptions, reader: Reader): Promise<RunningServer> {
  // Called from JavaScript too: what the types require is checked (library-options.ts), what they leave out defaulted.
  const given = serveOptionsOf(asked, reader);
  const options = { ...given, dir: given.dir ?? DEFAULT_OUT };
  // The caller's callbacks come checked and wrapped (library-options.ts): a log that throws cannot take the server down.
  const log = options.log ?? (() => {});
  const requestLog = options.requestLog;
  const workers = workerCount(options.workers);
  checkOptions(options, log);
  if (options.writable) for (const line of await checkWritable(options.data!)) log(line);
  const lockWait = options.lockWait ?? DEFAULT_LOCK_WAIT;
  // The servers get no build callback: a worker process's setup is cloned to it.
  const { onWarning: _builds, firstBuild, ...served } = options;
  const front = { ...served, limits: resolveLimits(options.limits), log, requestLog };
  const servers: SiteServers =
    workers > 1
      ? await ServerPool.start({ ...front, writable: !!options.writable }, workers)
      : await SiteServer.start(front);
  // Its builds, one after another, say a warning of the settings once (each text), not at every rebuild.
  const onWarning = settingsWarningsOnce(options.onWarning);
  const builder = new SiteBuilder({ ...options, onWarning, serverUrl: servers.url, lockWait });
  let writable: Awaited<ReturnType<typeof openWritable>> | undefined;
  let watching: Awaited<ReturnType<typeof watchDataset>> | undefined;
  // Stops a --watch rebuild under way as the server closes; `rebuilds` resolves once none runs.
  const stopRebuild = new AbortController();
  let rebuilds: ReturnType<typeof coalesced> | undefined;
  let unmark: (() => Promise<void>) | undefined;
  try {
    // A preview (links on its own URL) refuses a directory another preview is serving.
    if (options.data && !options.baseUrl) {
      // Checked before the marker is written: inside a deployed site, it would be written in that site.
      const inside = await besideAnotherSite({ dir: options.dir, data: options.data, url: servers.url });
      if (inside) throw inside;
      unmark = await markPreview(options.dir, previewUrl(servers.url), lockWait);
    }
    // Before the first build: cities a killed server logged are folded into the dataset first.
    if (options.writable) {
      const answer = (cities: Parameters<SiteServers['addCities']>[0]) => servers.addCities(cities);
      writable = await openWritable({ data: options.data!, dir: options.dir, builder, answer, lockWait, log });
    }
    if (options.data) {
      const first = (swapCheck: SwapCheck | undefined, siteLocked: boolean) =>
        builder.first(options.data!, firstBuild, swapCheck, siteLocked);
      // As build does (behind-site.ts): the log a writable server left folded in first (a writable
      // server's own writer did at open), the swap checked, the site's marker kept or removed.
      const around = { lockWait, log, dataName: options.dataName, signal: firstBuild?.signal };
      await buildCurrent(options.data, options.dir, around, first);
    }
    // Builds replace what the servers answer from; none is asked for before they open (no POST, no watch yet).
    builder.serving(writable ? writable.guard(servers) : servers);
    const { apiUrl, summary } = await servers.open(options.data ? undefined : options.baseUrl, writable?.writer);
    await writable?.started();
    // Without a dataset nothing can bring a site marked behind up to date: said, and served as it is.
    const behind = options.data ? null : await behindWarning(options.dir);
    if (behind) log(behind);
    if (options.watch) {
      // Without --writable, the log another process (a writable server) keeps beside the dataset is followed too.
      const withLog = !options.writable;
      rebuilds = coalesced(
        rebuildOnChange(
          options.data!,
          builder,
          () => servers.describe(),
          log,
          (ms) => watching?.again(ms),
          lockWait,
          stopRebuild.signal,
          withLog,
        ),
      );
      watching = await watchDataset(options.data!, rebuilds, withLog);
    }
    log(`serving ${options.dir} at ${apiUrl}${workers > 1 ? ` with ${workers} workers` : ''} (${summary})`);
    return {
      url: servers.url,
      apiUrl,
      async close() {
        watching?.close();
        stopRebuild.abort();
        // Refused (logged cities not folded in): the rest is closed all the same, then the refusal thrown.
        const unfolded = await writable?.close().then(
          () => null,
          (error: unknown) => error,
        );
        await servers.close();
        // After the servers: a rebuild waits for the site's file sends to end, which closing them cuts (closeGrace).
        await rebuilds?.ended();
        await unmark?.();
        if (unfolded) throw inLibraryWords('serve', unfolded);
      },
    };
  } catch (error) {
    watching?.close();
    stopRebuild.abort();
    await writable?.close().catch((unfolded: unknown) => log(`error: ${wordingOf(unfolded)}`));
    await servers.close();
    await rebuilds?.ended();
    await unmark?.();
    throw error;
  }
}

/** How many server processes `workers` asks for (1, a count, or one per CPU). */
export function workerCount(workers: ServeOptions['workers']): number {
  if (workers === undefined) return 1;
  if (workers === 'auto') return availableParallelism();
  if (!Number.isSafeInteger(workers) || workers < 1 || workers > 1024)
    throw new CitiesApiError(
      `${optionNamed('workers')} must be a whole number from 1 to 1024, or auto; not ${String(workers)}`,
      2,
    );
  return workers;
}
