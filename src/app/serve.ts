import { availableParallelism } from 'node:os';
import { CitiesApiError } from '../core/errors.js';
import { resolveLimits, type ServerLimits } from '../http/limits.js';
import { LiveSite } from './live-site.js';
import { checkWritable } from '../dataset/append-cities.js';
import { tokenProblems } from '../http/token-auth.js';
import { endpointPath } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';
import { startFront, type RunningServer } from './front.js';
import { checkBaseUrl, SiteKeeper, type SiteChoices } from './site-keeper.js';
import { serveCluster } from './serve-cluster.js';

const DEFAULT_LOCK_WAIT = 10_000;

export interface ServeOptions extends SiteChoices {
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  readonly token?: string | undefined;
  /** How long a POST or a rebuild waits for a lock another process holds (the site's build lock, the dataset's), in ms; default 10 s. */
  readonly lockWait?: number | undefined;
  /** Timeouts, header size and memory for answers; each defaults to DEFAULT_LIMITS' (see server-limits.ts). */
  readonly limits?: Partial<ServerLimits> | undefined;
  /** Also answer GET/HEAD of the site's file paths with the answer each stands for: the origin a CDN fails over to when its copy of the site lacks a file. */
  readonly failoverOrigin?: boolean | undefined;
  /**
   * Server processes answering requests (node:cluster), each from the whole site; 'auto': one per
   * CPU. Default 1: this process. With more, this process is the one writer (builds, --watch,
   * --writable's commits) and every worker answers from the new site before a rebuild is reported.
   */
  readonly workers?: number | 'auto' | undefined;
  readonly log?: (line: string) => void;
}

export type { RunningServer } from './front.js';

/** Starts the server: static files first (sirv), everything else computed live from the same page function. */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? (() => {});
  const workers = workerCount(options.workers);
  if ((options.writable || options.watch) && !options.data) throw new CitiesApiError(`--${options.writable ? 'writable' : 'watch'} needs a dataset file (--data)`, 2);
  if (options.writable && !options.token) throw new CitiesApiError('--writable needs a token: set CITIES_API_TOKEN in the environment', 2);
  if (options.writable) {
    const { error, warning } = tokenProblems(options.token!);
    if (error) throw new CitiesApiError(`CITIES_API_TOKEN ${error}`, 2);
    if (warning) log(`warning: CITIES_API_TOKEN ${warning}`);
    for (const line of await checkWritable(options.data!)) log(line);
  }
  const lockWait = options.lockWait ?? DEFAULT_LOCK_WAIT;
  const limits = resolveLimits(options.limits);
  if (workers > 1) return serveCluster({ ...options, lockWait, limits, log }, workers);
  const front = await startFront({ ...options, limits, log });
  let live: LiveSite | undefined;
  let keeper: SiteKeeper | undefined;
  try {
    keeper = new SiteKeeper({
      ...options,
      lockWait,
      log,
      url: front.url,
      settings: async () => live?.current.manifest.settings,
      replace: (build) => live!.replace(build),
      describe: () => `${live!.current.context.index.count} cities`,
    });
    if (options.data) await keeper.buildFrom(options.data);
    live = await LiveSite.open(options.dir);
    await live.watchBuilds();
    checkBaseUrl(options, live.current.manifest.settings);
    if (options.watch) await keeper.watch();
  } catch (error) {
    await keeper?.close();
    live?.close();
    await front.close();
    throw error;
  }
  front.open(live, keeper.writer);
  const { context } = live.current;
  const apiUrl = `${front.url}${escapeUriPath(endpointPath(context.spec.mount))}`;
  log(`serving ${options.dir} at ${apiUrl} (${context.index.count} cities; links on ${context.spec.baseUrl})`);
  return {
    url: front.url,
    apiUrl,
    async close() {
      live!.close();
      await keeper!.close();
      await front.close();
    },
  };
}

/** How many server processes `workers` asks for (1, a count, or one per CPU). */
export function workerCount(workers: ServeOptions['workers']): number {
  if (workers === undefined) return 1;
  if (workers === 'auto') return availableParallelism();
  if (!Number.isSafeInteger(workers) || workers < 1 || workers > 1024) throw new CitiesApiError(`--workers must be a whole number from 1 to 1024, or auto; not ${String(workers)}`, 2);
  return workers;
}
