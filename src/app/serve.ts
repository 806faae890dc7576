import { watch, type FSWatcher } from 'node:fs';
import { realpath } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { build } from './build.js';
import { CityWriter } from '../dataset/city-writer.js';
import type { Collation } from '../core/collation.js';
import { CitiesApiError } from '../core/errors.js';
import { createHttpServer } from '../http/node-server.js';
import { SendGate } from '../http/send-gate.js';
import { answerConnect, createHandler } from '../http/node-handler.js';
import { resolveLimits, type ServerLimits } from '../http/limits.js';
import { DEFAULT_PAGE_SIZES, normalizeBaseUrl } from '../site/spec.js';
import { LiveSite } from './live-site.js';
import { readDatasetBytes } from '../dataset/read-dataset.js';
import { sha256 } from '../write/file-output.js';
import { checkWritable } from '../dataset/append-cities.js';
import { LockBusyError, siteSiblings, whileBusy } from '../write/lock.js';
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
}

export interface RunningServer {
  /** `http://host:port`, where the server listens. */
  readonly url: string;
  /** Where `/cities/` is answered. */
  readonly apiUrl: string;
  close(): Promise<void>;
}

/** Starts the server: static files first (sirv), everything else computed live from the same page function. */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? (() => {});
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
  let live: LiveSite | undefined;
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  let writer: CityWriter | undefined;
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
  let isReady = false;
  const server = createHttpServer({
    limits,
    handler: (req, res) => (isReady ? handler(req, res) : void started.then(() => handler(req, res))),
    answerConnect: async (req) => {
      if (!isReady) await started;
      return answerConnect(req, live!.current.context);
    },
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new CitiesApiError(`port ${options.port} on ${host} is already in use; choose another with --port`) : error));
    server.listen(options.port ?? 8080, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    let builtHash = '';
    const settings = () => live?.current.manifest.settings;
    // Waits (bounded) while another process builds the same site, rather than failing at once.
    const buildFrom = (data: string) => whileBusy(async () => {
      const text = await readDatasetBytes(data);
      await build({
        data,
        out: options.dir,
        collation: options.collation ?? settings()?.collation ?? 'locale',
        baseUrl: options.baseUrl ?? settings()?.baseUrl ?? url.replace(/\/\/(0\.0\.0\.0|\[::\])/, '//localhost'),
        pageSizes: options.pageSizes ?? settings()?.pageSizes ?? DEFAULT_PAGE_SIZES,
        orderings: options.orderings ?? settings()?.orderings,
        liveUrl: settings()?.liveUrl ?? undefined,
      });
      builtHash = sha256(text);
    }, lockWait, siteSiblings(options.dir).lock);
    // Site replacements run one at a time; one that fails leaves the site as it was and does not stop the next.
    let queue: Promise<unknown> = Promise.resolve();
    const publish = (data: string): Promise<void> => {
      const run = queue.then(() => live!.replace(() => buildFrom(data)));
      queue = run.catch(() => undefined);
      return run;
    };
    if (options.data) await buildFrom(options.data);
    live = await LiveSite.open(options.dir);
    await live.watchBuilds();
    if (!options.data && options.baseUrl && normalizeBaseUrl(options.baseUrl) !== settings()!.baseUrl) {
      throw new CitiesApiError(`${options.dir} was built for ${settings()!.baseUrl}; rebuild it with --base-url ${options.baseUrl}, or pass --data to build it now`, 2);
    }
    if (options.writable) writer = new CityWriter(options.data!, { publish, lockWait, log });
    if (options.watch) {
      // A symlinked dataset changes when its target is edited, or when the link is pointed elsewhere.
      const real = await realpath(options.data!);
      const watched = new Set([resolve(options.data!), real]);
      const check = async () => {
        const text = await readDatasetBytes(options.data!).catch(() => null);
        if (!text || sha256(text) === builtHash) return;
        await publish(options.data!).then(
          () => log(`${options.data} changed: rebuilt, now ${live!.current.context.index.count} cities`),
          (error) => {
            log(`${options.data} changed but was not used: ${(error as Error).message}`);
            // Another build held the site: try again once it may be done.
            if (error instanceof LockBusyError) timer = setTimeout(check, lockWait);
          },
        );
      };
      watchers = [...new Set([...watched].map(dirname))].map((dir) => watch(dir, (_, file) => {
        if (!file || !watched.has(join(dir, file))) return;
        clearTimeout(timer);
        timer = setTimeout(check, 150);
      }));
    }
  } catch (error) {
    for (const watcher of watchers) watcher.close();
    live?.close();
    server.close();
    throw error;
  }
  isReady = true;
  ready();
  const { context } = live!.current;
  const apiUrl = `${url}${escapeUriPath(endpointPath(context.spec.mount))}`;
  log(`serving ${options.dir} at ${apiUrl} (${context.index.count} cities; links on ${context.spec.baseUrl})`);
  return {
    url,
    apiUrl,
    async close() {
      for (const watcher of watchers) watcher.close();
      clearTimeout(timer);
      live?.close();
      await writer?.idle();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
