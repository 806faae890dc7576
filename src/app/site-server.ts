import { CitiesApiError, optionNamed } from '../core/errors.js';
import { endpointPath } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';
import type { City } from '../core/fields.js';
import type { CatchingUpStore, CityStore } from '../post/city-store.js';
import { normalizeBaseUrl, type SiteSettings } from '../site/spec.js';
import { type Front, type FrontOptions, startFront } from './front.js';
import { LiveSite } from './live-site.js';
import type { Served } from './site-builder.js';

/** Where the servers answer the API, and what from (`48 cities; links on ...`). */
export interface Opened {
  readonly apiUrl: string;
  readonly summary: string;
}

/**
 * The HTTP servers serve's one writer (the process that builds, watches and takes POSTs) serves
 * through: one in this process (SiteServer), or N worker processes (ServerPool). They listen at
 * once; open() has them answer from the built site; a build replaces what they answer from.
 */
export interface SiteServers extends Served {
  /** `http://host:port`, where they listen. */
  readonly url: string;
  /** Opens the built site (checked to be built for `baseUrl`, when given) and answers from it; POSTs go to `store`. */
  open(baseUrl: string | undefined, store: CatchingUpStore | undefined): Promise<Opened>;
  /** Answer with these created cities too (a POST's, before it is acknowledged; before open: from the first request); see LiveSite.addCities. */
  addCities(cities: readonly City[]): Promise<void>;
  /** What answers now, for the log: `48 cities`, `answered by 2 workers`. */
  describe(): string;
  close(): Promise<void>;
}

/** One HTTP server answering from the site in this process: serve with one process, and each of serve --workers' workers. */
export class SiteServer implements SiteServers {
  private live: LiveSite | undefined;
  /** Cities added before the site is open. */
  private early: City[] = [];

  private constructor(
    private readonly front: Front,
    private readonly dir: string,
  ) {}

  /** Listens (requests wait until open()). */
  static async start(options: FrontOptions): Promise<SiteServer> {
    return new SiteServer(await startFront(options), options.dir);
  }

  get url(): string {
    return this.front.url;
  }

  get settings(): SiteSettings {
    return this.live!.settings;
  }

  async open(baseUrl: string | undefined, store: CityStore | undefined): Promise<Opened> {
    this.live = await LiveSite.open(this.dir);
    this.live.addCities(this.early);
    this.early = [];
    await this.live.watchBuilds();
    checkBaseUrl(this.dir, baseUrl, this.live.settings);
    await this.front.warmUp(this.live, store);
    this.front.open(this.live, store);
    const { context } = this.live.current;
    return {
      apiUrl: `${this.front.url}${escapeUriPath(endpointPath(context.spec.mount))}`,
      summary: `${context.index.count} cities; links on ${context.spec.baseUrl}`,
    };
  }

  replace(build: () => Promise<void>): Promise<void> {
    return this.live!.replace(build);
  }

  async addCities(cities: readonly City[]): Promise<void> {
    if (this.live) this.live.addCities(cities);
    else this.early.push(...cities);
  }

  describe(): string {
    return `${this.live!.current.context.index.count} cities`;
  }

  async close(): Promise<void> {
    await this.live?.close();
    await this.front.close();
  }
}

/** A site served as built must have been built for the base URL asked for. */
function checkBaseUrl(dir: string, baseUrl: string | undefined, settings: SiteSettings): void {
  if (baseUrl && normalizeBaseUrl(baseUrl) !== settings.baseUrl)
    throw new CitiesApiError(
      `${dir} was built for ${settings.baseUrl}; rebuild it with ${optionNamed('baseUrl')} ${baseUrl}, or pass ${optionNamed('data')} to build it now`,
      2,
    );
}
