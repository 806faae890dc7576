import { watch, type FSWatcher } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { build } from './build.js';
import { CityWriter } from '../dataset/city-writer.js';
import type { Collation } from '../core/collation.js';
import { DEFAULT_PAGE_SIZES, normalizeBaseUrl, type SiteSettings } from '../site/spec.js';
import { CitiesApiError } from '../core/errors.js';
import { readDatasetBytes } from '../dataset/read-dataset.js';
import { sha256 } from '../write/file-output.js';
import { LockBusyError, siteSiblings, whileBusy } from '../write/lock.js';

/** What a served site is, and how it is kept: the part of ServeOptions the writer reads. */
export interface SiteChoices {
  /** The site directory: served as built, or (re)built first from `data`. */
  readonly dir: string;
  readonly data?: string | undefined;
  /** Where links point; default: the site's own base URL, or this server's URL when building. */
  readonly baseUrl?: string | undefined;
  readonly collation?: Collation | undefined;
  readonly pageSizes?: readonly number[] | undefined;
  readonly orderings?: readonly string[] | undefined;
  /** Accept POST (needs `data` and `token`). */
  readonly writable?: boolean | undefined;
  /** Rebuild when the dataset file changes (needs `data`). */
  readonly watch?: boolean | undefined;
}

export interface KeeperOptions extends SiteChoices {
  readonly lockWait: number;
  /** Where the server listens: the default base URL of a site it builds. */
  readonly url: string;
  /** The settings of the site answered now, if any: a rebuild keeps them. */
  readonly settings: () => Promise<SiteSettings | undefined>;
  /** Runs `build` (which rewrites the site's files) so that every server answers from the new site once it resolves. */
  readonly replace: (build: () => Promise<void>) => Promise<void>;
  /** Said after a --watch rebuild (e.g. how many cities are answered now). */
  readonly describe: () => string;
  readonly log: (line: string) => void;
}

/**
 * The one writer of a served site: builds it from the dataset, rebuilds it when the dataset
 * changes (--watch) and commits POSTed cities (--writable), one replacement at a time; a
 * replacement that fails leaves the site as it was and does not stop the next.
 */
export class SiteKeeper {
  readonly writer: CityWriter | undefined;
  private builtHash = '';
  private queue: Promise<unknown> = Promise.resolve();
  private watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: KeeperOptions) {
    const publish = (data: string) => this.publish(data);
    this.writer = options.writable ? new CityWriter(options.data!, { publish, lockWait: options.lockWait, log: options.log }) : undefined;
  }

  /** Builds the site from the dataset; waits (bounded) while another process builds the same site, rather than failing at once. */
  buildFrom(data: string): Promise<void> {
    const { options } = this;
    return whileBusy(async () => {
      const text = await readDatasetBytes(data);
      const settings = await options.settings();
      await build({
        data,
        out: options.dir,
        collation: options.collation ?? settings?.collation ?? 'locale',
        baseUrl: options.baseUrl ?? settings?.baseUrl ?? options.url.replace(/\/\/(0\.0\.0\.0|\[::\])/, '//localhost'),
        pageSizes: options.pageSizes ?? settings?.pageSizes ?? DEFAULT_PAGE_SIZES,
        orderings: options.orderings ?? settings?.orderings,
        liveUrl: settings?.liveUrl ?? undefined,
      });
      this.builtHash = sha256(text);
    }, options.lockWait, siteSiblings(options.dir).lock);
  }

  /** Rebuilds from `data` once the replacements before it are done; every server answers from the result once it resolves. */
  publish(data: string): Promise<void> {
    const run = this.queue.then(() => this.options.replace(() => this.buildFrom(data)));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** --watch: rebuilds when the dataset changes (a symlinked one: when its target is edited, or the link pointed elsewhere). */
  async watch(): Promise<void> {
    const { data, lockWait, log } = this.options;
    const real = await realpath(data!);
    const watched = new Set([resolve(data!), real]);
    const check = async () => {
      const text = await readDatasetBytes(data!).catch(() => null);
      if (!text || sha256(text) === this.builtHash) return;
      await this.publish(data!).then(
        () => log(`${data} changed: rebuilt, now ${this.options.describe()}`),
        (error) => {
          log(`${data} changed but was not used: ${(error as Error).message}`);
          // Another build held the site: try again once it may be done.
          if (error instanceof LockBusyError) this.timer = setTimeout(check, lockWait);
        },
      );
    };
    this.watchers = [...new Set([...watched].map(dirname))].map((dir) => watch(dir, (_, file) => {
      if (!file || !watched.has(join(dir, file))) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(check, 150);
    }));
  }

  /** Stops watching; resolves once the POSTs under way are committed or refused. */
  async close(): Promise<void> {
    for (const watcher of this.watchers) watcher.close();
    clearTimeout(this.timer);
    await this.writer?.idle();
  }
}

/** A site served as built must have been built for the base URL asked for. */
export function checkBaseUrl(options: { readonly dir: string; readonly data?: string | undefined; readonly baseUrl?: string | undefined }, settings: SiteSettings): void {
  if (!options.data && options.baseUrl && normalizeBaseUrl(options.baseUrl) !== settings.baseUrl) {
    throw new CitiesApiError(`${options.dir} was built for ${settings.baseUrl}; rebuild it with --base-url ${options.baseUrl}, or pass --data to build it now`, 2);
  }
}
