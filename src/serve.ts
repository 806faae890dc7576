import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname } from 'node:path';
import { build } from './build.js';
import { CityWriter } from './city-writer.js';
import type { Collation } from './collation.js';
import { CitiesApiError } from './errors.js';
import { createHandler } from './server.js';
import { normalizeBaseUrl } from './settings.js';
import { loadSite, type SiteState } from './site-state.js';
import { sha256 } from './site-writer.js';

export interface ServeOptions {
  /** The site directory: served as built, or (re)built first from `data`. */
  readonly dir: string;
  readonly data?: string | undefined;
  /** Where links point; default: the site's own base URL, or this server's URL when building. */
  readonly baseUrl?: string | undefined;
  readonly collation?: Collation | undefined;
  readonly pageSizes?: readonly number[] | undefined;
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  /** Accept POST (needs `data` and `token`). */
  readonly writable?: boolean | undefined;
  readonly token?: string | undefined;
  /** Rebuild when the dataset file changes (needs `data`). */
  readonly watch?: boolean | undefined;
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
  let site: SiteState | undefined;
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  let writer: CityWriter | undefined;
  const handler = createHandler({ site: () => site!, get writer() { return writer; }, token: options.token, onError: (e) => log(`error: ${(e as Error).stack ?? String(e)}`) });
  const server = createServer((req, res) => void started.then(() => handler(req, res)));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new CitiesApiError(`port ${options.port} on ${host} is already in use; choose another with --port`) : error));
    server.listen(options.port ?? 8080, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let watcher: FSWatcher | undefined;
  try {
    let builtHash = '';
    const rebuild = async () => {
      const data = options.data!;
      const text = await readFile(data);
      await build({
        data, out: options.dir, collation: options.collation ?? site?.manifest.settings.collation ?? 'locale',
        baseUrl: options.baseUrl ?? site?.manifest.settings.baseUrl ?? url.replace(/\/\/(0\.0\.0\.0|\[::\])/, '//localhost'),
        pageSizes: options.pageSizes ?? site?.manifest.settings.pageSizes ?? [10, 20, 50, 100],
      });
      site = await loadSite(options.dir);
      builtHash = sha256(text);
    };
    let queue = Promise.resolve();
    const serialized = (task: () => Promise<void>) => (queue = queue.then(task, task));
    if (options.data) await serialized(rebuild);
    else {
      site = await loadSite(options.dir);
      if (options.baseUrl && normalizeBaseUrl(options.baseUrl) !== site.manifest.settings.baseUrl) {
        throw new CitiesApiError(`${options.dir} was built for ${site.manifest.settings.baseUrl}; rebuild it with --base-url ${options.baseUrl}, or pass --data to build it now`, 2);
      }
    }
    if (options.writable) writer = new CityWriter(options.data!, () => serialized(rebuild));
    if (options.watch) {
      const name = basename(options.data!);
      let timer: NodeJS.Timeout | undefined;
      watcher = watch(dirname(options.data!), (_, file) => {
        if (file !== name) return;
        clearTimeout(timer);
        timer = setTimeout(() => void serialized(async () => {
          const text = await readFile(options.data!).catch(() => null);
          if (!text || sha256(text) === builtHash) return;
          await rebuild().then(
            () => log(`${options.data} changed: rebuilt, now ${site!.context.index.count} cities`),
            (error) => log(`${options.data} changed but was not used: ${(error as Error).message}`),
          );
        }), 150);
      });
    }
  } catch (error) {
    server.close();
    throw error;
  }
  ready();
  const apiUrl = `${url}${site!.context.mount}/cities/`;
  log(`serving ${options.dir} at ${apiUrl} (${site!.context.index.count} cities; links on ${site!.context.baseUrl})`);
  return {
    url,
    apiUrl,
    async close() {
      watcher?.close();
      await writer?.idle();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
