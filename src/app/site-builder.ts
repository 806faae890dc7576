import { runBuild, type BuildOptions, type BuildResult, type SiteBuildOptions } from './build.js';
import type { SwapCheck } from './build-options.js';
import { interruptedWaiting } from './behind-site.js';
import { besideAnotherSite, previewRefusal, previewUrl } from './preview-guard.js';
import type { Collation } from '../core/collation.js';
import { CitiesApiError } from '../core/errors.js';
import { datasetDigest } from '../dataset/read-dataset.js';
import { DEFAULT_PAGE_SIZES, type SiteSettings } from '../site/spec.js';
import { readManifestHead } from '../store/manifest-file.js';
import { siteSiblings, whileBusy } from '../fs/lock.js';

/** What a build replaces: the site one or more servers answer from (a LiveSite, or serve's servers). */
export interface Served {
  replace(build: () => Promise<void>): Promise<void>;
  /** The settings of the site served. */
  readonly settings: SiteSettings;
}

export interface SiteBuilderOptions extends Pick<BuildOptions, 'dataName' | 'strict' | 'onWarning' | 'durable'> {
  readonly dir: string;
  /** Settings given to serve; each absent one is the served site's own, else the build's default. */
  readonly baseUrl?: string | undefined;
  readonly collation?: Collation | undefined;
  readonly pageSizes?: readonly number[] | undefined;
  readonly orderings?: readonly string[] | undefined;
  /** The base URL of a site built with none given and none before: the server's own. */
  readonly serverUrl: string;
  /** How long a build waits for another process's build of the same site (ms). */
  readonly lockWait: number;
}

/**
 * Builds the served site from a dataset file, for serve's --data, --watch and --writable: one
 * replacement at a time, each waiting (bounded) for another process's build of the same site; a
 * replacement that fails leaves the site as it was and does not stop the next.
 */
export class SiteBuilder {
  private live: Served | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The digest (datasetDigest) of the dataset bytes the site was last built from: hashed a chunk at
   * a time as read, never the whole file at once on the thread that answers (70 MB at 140,000 cities).
   */
  private builtHash = '';

  constructor(private readonly options: SiteBuilderOptions) {}

  /** The site directory it builds. */
  get dir(): string {
    return this.options.dir;
  }

  /** Builds the site before it is served, telling `progress` how it goes; `siteLocked`: the caller holds the site's lock. */
  async first(
    data: string,
    progress?: Pick<BuildOptions, 'onRead' | 'onStart' | 'onProgress' | 'signal'>,
    swapCheck?: SwapCheck,
    siteLocked?: boolean,
  ): Promise<BuildResult> {
    return this.build(data, { ...progress, swapCheck, siteLocked });
  }

  /** From now on, builds replace what `live` serves. */
  serving(live: Served): void {
    this.live = live;
  }

  /**
   * Rebuilds from `data` and makes the server answer from the new site; swapped in only if `swapCheck` holds then (DatasetMoved).
   * `signal` aborted stops it as Ctrl-C stops a build (the site as it was), or before it starts.
   */
  publish(data: string, swapCheck?: SwapCheck, signal?: AbortSignal): Promise<void> {
    const live = this.live;
    // Rebuilds run at the lowest priority: the old site answers meanwhile.
    const rebuild = async () => void (await this.build(data, { background: true, swapCheck, signal }));
    const run = this.queue.then(() => (live ? live.replace(rebuild) : rebuild()));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Whether `data` holds bytes other than those the site was built from (unreadable: no). */
  async changed(data: string): Promise<boolean> {
    const digest = await datasetDigest(data).catch(() => null);
    return digest !== null && digest.toString('hex') !== this.builtHash;
  }

  private build(
    data: string,
    progress?: Pick<
      SiteBuildOptions,
      'onRead' | 'onStart' | 'onProgress' | 'signal' | 'background' | 'swapCheck' | 'siteLocked'
    >,
  ): Promise<BuildResult> {
    const { options } = this;
    const served: SiteSettings | undefined = this.live?.settings;
    return whileBusy(
      async () => {
        // Before serving, the site already in DIR (if any) is "the served site's own", except its
        // base URL: a preview's links are the server's own unless --base-url says otherwise. A site
        // built for deployment (a base URL not on this machine) is never rewritten by a preview:
        // neither by its first build nor by a rebuild (--watch, --writable) after another process
        // built the served directory for deployment (the server then serves that site's settings).
        const settings = served ?? (await readManifestHead(options.dir).catch(() => null))?.settings;
        const serverUrl = previewUrl(options.serverUrl);
        const preview = options.baseUrl ? undefined : { dir: options.dir, data, url: serverUrl };
        const refusal = preview && (previewRefusal(preview, settings) ?? (await besideAnotherSite(preview)));
        if (refusal) throw refusal;
        const digest = await datasetDigest(data);
        const result = await runBuild({
          data,
          dataName: options.dataName,
          strict: options.strict,
          onWarning: options.onWarning,
          out: options.dir,
          collation: options.collation ?? settings?.collation ?? 'locale',
          baseUrl: options.baseUrl ?? serverUrl,
          pageSizes: options.pageSizes ?? settings?.pageSizes ?? DEFAULT_PAGE_SIZES,
          orderings: options.orderings ?? settings?.orderings,
          liveUrl: settings?.liveUrl ?? undefined,
          compression: settings?.compression,
          host: settings?.host,
          durable: options.durable,
          preview,
          ...progress,
        });
        this.builtHash = digest.toString('hex');
        return result;
      },
      options.lockWait,
      progress?.siteLocked ? undefined : siteSiblings(options.dir).lock,
      undefined,
      progress?.signal,
    ).catch((error: unknown) => {
      // Ctrl-C while another process's build was waited for: nothing was written.
      if (!progress?.signal?.aborted || error instanceof CitiesApiError) throw error;
      throw interruptedWaiting(options.dir);
    });
  }
}
