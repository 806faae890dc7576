import { CityWriter } from '../dataset/city-writer.js';
import type { Collation } from '../core/collation.js';
import { CitiesApiError } from '../core/errors.js';
import { createHttpServer } from '../http/node-server.js';
import { listen } from '../http/listen.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { withPreviewPages } from '../http/preview-pages.js';
import { withRequestLog } from '../http/request-log.js';
import { SendGate } from '../http/send-gate.js';
import { answerConnect, createHandler } from '../http/node-handler.js';
import { resolveLimits, type ServerLimits } from '../http/limits.js';
import { normalizeBaseUrl } from '../site/spec.js';
import { LiveSite } from './live-site.js';
import { SiteBuilder } from './site-builder.js';
import { watchDataset } from './dataset-watch.js';
import { checkWritable } from '../dataset/append-cities.js';
import { LockBusyError } from '../write/lock.js';
import { tokenProblems } from '../http/token-auth.js';
import { endpointPath } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';

const DEFAULT_LOCK_WAIT = 10_000;

export interface ServeOptions {
  /** The site directory: served as built, or (re)built first from `data`. */
  readonly dir: string;
  readonly data?: string | undefined;
  /** Where links point; default: the site's own base URL, or this server's URL when building. */
  readonly baseUrl?: string | undefined;
  readonly collation?: Collation | undefined;
  readonly pageSizes?: readonly number[] | undefined;
  readonly orderings?: readonly string[] | undefined;
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  /** Accept POST (needs `data` and `token`). */
  readonly writable?: boolean | undefined;
  readonly token?: string | undefined;
  /** Rebuild when the dataset file changes (needs `data`). */
  readonly watch?: boolean | undefined;
  /** How long a POST or a rebuild waits for a lock another process holds (the site's build lock, the dataset's), in ms; default 10 s. */
  readonly lockWait?: number | undefined;
  /** Timeouts, header size and memory for answers; each defaults to DEFAULT_LIMITS' (see server-limits.ts). */
  readonly limits?: Partial<ServerLimits> | undefined;
  /** Also answer GET/HEAD of the site's file paths with the answer each stands for: the origin a CDN fails over to when its copy of the site lacks a file. */
  readonly failoverOrigin?: boolean | undefined;
  readonly log?: (line: string) => void;
  /** Told a line per request once answered (method, target, status, ms); none when absent. */
  readonly requestLog?: ((line: string) => void) | undefined;
  /** Answer `/` (a page linking the API) and `/openapi.json` (the site's), which the reference answers with a 404 (default true). */
  readonly previewPages?: boolean | undefined;
}

export interface RunningServer {
  /** `http://host:port`, where the server listens. */
  readonly url: string;
  /** Where `/cities/` is answered. */
  readonly apiUrl: string;
  close(): Promise<void>;
}

/** Checks the options that need no I/O, and the token's strength (a warning when weak). */
function checkOptions(options: ServeOptions, log: (line: string) => void): void {
  if ((options.writable || options.watch) && !options.data) throw new CitiesApiError(`--${options.writable ? 'writable' : 'watch'} needs a dataset file (--data)`, 2);
  if (options.writable && !options.token) throw new CitiesApiError('--writable needs a token: set CITIES_API_TOKEN in the environment', 2);
  if (options.writable) {
    const { error, warning } = tokenProblems(options.token!);
    if (error) throw new CitiesApiError(`CITIES_API_TOKEN ${error}`, 2);
    if (warning) log(`warning: CITIES_API_TOKEN ${warning}`);
  }
}

/**
 * Starts the server, in four steps each in its own module: listen (http/listen.ts; requests
 * wait until the site is ready), ensure the site is built (site-builder.ts, with --data),
 * serve it (live-site.ts, following other processes' builds), then accept POST (--writable)
 * and follow the dataset (--watch, dataset-watch.ts). Static files first (sirv), everything
 * else computed live from the same page function.
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? (() => {});
  checkOptions(options, log);
  if (options.writable) for (const line of await checkWritable(options.data!)) log(line);
  const lockWait = options.lockWait ?? DEFAULT_LOCK_WAIT;
  const limits = resolveLimits(options.limits);
  let live: LiveSite | undefined;
  let writer: CityWriter | undefined;
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  let isReady = false;
  const handler = createHandler({
    site: () => live!.current,
    track: (res) => live!.track(res),
    get writer() { return writer; },
    token: options.token,
    bodyTimeout: limits.bodyTimeout,
    gate: new SendGate(limits.maxBufferedBytes, limits.sendTimeout),
    onError: (e) => log(`error: ${(e as Error).stack ?? String(e)}`),
    filePaths: options.failoverOrigin,
  });
  const whenReady = (req: IncomingMessage, res: ServerResponse) => (isReady ? handler(req, res) : void started.then(() => handler(req, res)));
  const previewed = options.previewPages ?? true ? withPreviewPages(whenReady, { dir: options.dir, context: async () => (await started, live!.current.context) }) : whenReady;
  const server = createHttpServer({
    limits,
    handler: options.requestLog ? withRequestLog(previewed, options.requestLog) : previewed,
    answerConnect: async (req) => {
      if (!isReady) await started;
      return answerConnect(req, live!.current.context);
    },
  });
  const listening = await listen(server, options.port ?? 8080, options.host ?? '127.0.0.1');
  const builder = new SiteBuilder({ ...options, serverUrl: listening.url, lockWait });
  let watching: Awaited<ReturnType<typeof watchDataset>> | undefined;
  try {
    if (options.data) await builder.first(options.data);
    live = await LiveSite.open(options.dir);
    builder.serving(live);
    await live.watchBuilds();
    const built = live.current.manifest.settings.baseUrl;
    if (!options.data && options.baseUrl && normalizeBaseUrl(options.baseUrl) !== built) {
      throw new CitiesApiError(`${options.dir} was built for ${built}; rebuild it with --base-url ${options.baseUrl}, or pass --data to build it now`, 2);
    }
    if (options.writable) writer = new CityWriter(options.data!, { publish: (data) => builder.publish(data), lockWait, log });
    if (options.watch) watching = await watchDataset(options.data!, () => void rebuildOnChange(options.data!, builder, live!, log, (ms) => watching?.again(ms), lockWait));
  } catch (error) {
    watching?.close();
    live?.close();
    await listening.close();
    throw error;
  }
  isReady = true;
  ready();
  const { context } = live.current;
  const apiUrl = `${listening.url}${escapeUriPath(endpointPath(context.spec.mount))}`;
  log(`serving ${options.dir} at ${apiUrl} (${context.index.count} cities; links on ${context.spec.baseUrl})`);
  return {
    url: listening.url,
    apiUrl,
    async close() {
      watching?.close();
      live?.close();
      await writer?.idle();
      await listening.close();
    },
  };
}

/** --watch: a changed dataset is built and served; one that fails is reported and the site kept. */
async function rebuildOnChange(data: string, builder: SiteBuilder, live: LiveSite, log: (line: string) => void, retry: (ms: number) => void, lockWait: number): Promise<void> {
  if (!(await builder.changed(data))) return;
  await builder.publish(data).then(
    () => log(`${data} changed: rebuilt, now ${live.current.context.index.count} cities`),
    (error) => {
      log(`${data} changed but was not used: ${(error as Error).message}`);
      // Another build held the site: try again once it may be done.
      if (error instanceof LockBusyError) retry(lockWait);
    },
  );
}
