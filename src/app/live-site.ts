import { stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { MANIFEST_PATH } from '../site/manifest.js';
import { readManifestHead } from '../store/manifest-file.js';
import { loadSite, type LoadedSite, type ReadSite } from '../http/site-state.js';
import { threadReader } from '../http/site-data-thread.js';
import { SiteMemories } from '../http/site-memories.js';
import { holdComposing } from '../http/compose-thread.js';
import { loadedHas, withCities } from '../http/state-append.js';
import type { City } from '../core/fields.js';
import { optionNamed } from '../core/errors.js';
import { fileSystemError, type PathRole } from '../fs/fs-error.js';
import type { SiteSettings } from '../site/spec.js';
import { BuildFollower } from './build-follower.js';

/** How long a replaced site's directory stays open for reads already under way (its descriptor number is then reused). */
const RELEASE_MS = 30_000;

/**
 * The site a server answers from, kept consistent while its files change: while a build (ours
 * or another process's, seen by its lock file) replaces the tree, a file could change between
 * its lookup and its read, so answers are computed live from the data in memory; once the new
 * tree is in place it is loaded and files are served again. A site is loaded (its dataset parsed,
 * its fields ranked) in a thread while the old one answers, and answered only once complete: a
 * failed load leaves the old one answering, and loads run one at a time, so a slower load of an
 * older build never replaces a newer one.
 */
export class LiveSite {
  private state: LoadedSite;
  private replacing = 0;
  private readonly sending = new Set<ServerResponse>();
  /** Another process's builds, followed through the lock (each counted once in `replacing` while it runs). */
  private builds: BuildFollower | undefined;
  private closed = false;
  /** Which site the state was loaded from (see manifestId). */
  private manifestId = '';
  /** The directories of sites replaced by a newer one, each let go after RELEASE_MS (the site itself is not kept: its data is garbage once no answer holds it). */
  private readonly releasing = new Map<NodeJS.Timeout, () => void>();
  /** Created cities answered that the loaded site's files do not hold (files unused while there are any). */
  private unbuilt: City[] = [];
  /** Their ids (a batch is checked against them city by city). */
  private unbuiltIds = new Set<number>();
  /** Whether the loaded site's dataset holds an id (loadedHas), made when first needed. */
  private loadedHas: ((id: number) => boolean) | undefined;
  /** The last reload asked for: the next one starts after it. */
  private reloading: Promise<void> = Promise.resolve();
  /** Lets go of the composing thread (compose-thread.ts), held while the site is served. */
  private letGoComposing: () => Promise<void> = async () => {};

  private constructor(
    private readonly dir: string,
    state: LoadedSite,
    private readonly read: ReadSite,
    /** The memories its sites are read into: a replaced site's, once no answer reads it, is the next load's. */
    private readonly memories: SiteMemories,
  ) {
    this.state = state;
  }

  /** `read`: how a site's data is read and ranked (default: in threads of its own, see site-data-thread.ts); closed with the site. */
  static async open(dir: string, read: ReadSite = threadReader()): Promise<LiveSite> {
    // Taken before the load: a build swapped in meanwhile shows as another id, and is loaded again.
    const id = await manifestId(dir).catch(() => '');
    // A failure of the file system said of the site (a manifest that is a directory...), as build says it.
    const memories = new SiteMemories();
    const loaded = await loadSite(dir, read, memories).catch(async (error) => {
      await read.close?.();
      throw await fileSystemError(error, SERVED_ROLE, dir);
    });
    const site = new LiveSite(dir, loaded, read, memories);
    site.manifestId = id;
    // Before the first request: one that composes a multi-field order would wait for it to start.
    site.letGoComposing = holdComposing();
    return site;
  }

  get current(): LoadedSite {
    return this.replacing ? { ...this.state, context: { ...this.state.context, useFiles: false } } : this.state;
  }

  /** The settings the site was built with. */
  get settings(): SiteSettings {
    return this.state.manifest.settings;
  }

  /**
   * Answers with `cities` too from now on (a POST's, before it is acknowledged), computed live
   * until a site holding them is loaded. Cities already answered are skipped.
   */
  addCities(cities: readonly City[]): void {
    const fresh: City[] = [];
    for (const city of cities)
      if (!this.answers(city.id)) {
        fresh.push(city);
        this.unbuiltIds.add(city.id);
      }
    if (!fresh.length) return;
    this.state = withCities(this.state, fresh);
    this.unbuilt.push(...fresh);
  }

  private answers(id: number): boolean {
    if (this.unbuiltIds.has(id)) return true;
    this.loadedHas ??= loadedHas(this.state);
    return this.loadedHas(id);
  }

  /** Marks a response as streaming a site file until it finishes. */
  track(res: ServerResponse): void {
    this.sending.add(res);
    res.once('close', () => this.sending.delete(res));
  }

  /** Runs `replace` (which rewrites the site's files) with files unused, then loads the new site; also when it failed (a durable build whose sync failed after its swap put its site in place all the same). */
  async replace(replace: () => Promise<void>): Promise<void> {
    this.replacing++;
    if (!this.closed) this.read.prepare?.();
    try {
      while (this.sending.size) await new Promise((resolve) => setTimeout(resolve, 5));
      await replace().catch((error: unknown) => this.reload().finally(() => Promise.reject(error)));
      await this.reload();
    } finally {
      this.replacing--;
    }
  }

  /**
   * Follows builds made by other processes (build-follower.ts): files unused while a live process
   * holds the build lock, the site reloaded once the lock is released.
   */
  async watchBuilds(): Promise<void> {
    this.builds = new BuildFollower(this.dir, {
      held: () => {
        this.replacing++;
        if (!this.closed) this.read.prepare?.();
      },
      free: () => this.reload().catch(() => undefined),
      released: () => void this.replacing--,
    });
    await this.builds.start();
  }

  /** Stops following builds, lets the site go; resolves once no thread of its runs (a library caller's closed server leaves none). */
  async close(): Promise<void> {
    this.builds?.close();
    this.closed = true;
    for (const [timer, release] of this.releasing) {
      clearTimeout(timer);
      release();
    }
    this.releasing.clear();
    this.state.release();
    this.state.lease?.end();
    await Promise.all([this.read.close?.(), this.letGoComposing()]);
  }

  /** Loads the site as it is now, if it changed since the last load (after any load under way). */
  reload(): Promise<void> {
    const next = this.reloading.catch(() => undefined).then(() => this.load());
    this.reloading = next;
    return next;
  }

  private async load(): Promise<void> {
    const id = await manifestId(this.dir);
    if (id === this.manifestId || this.closed) return;
    // A read that close() ended (or refused) is no failure: the site is answered no more.
    const state = await loadSite(this.dir, this.read, this.memories).catch((error) =>
      this.closed ? null : Promise.reject(error),
    );
    if (!state || this.closed) return void (state?.release(), state?.lease?.end());
    const old = this.state;
    // Answered no more: its memory is the next load's once the answers that may still read it are over.
    old.lease?.end();
    const has = this.unbuilt.length ? loadedHas(state) : undefined;
    this.unbuilt = this.unbuilt.filter((city) => !has!(city.id));
    this.unbuiltIds = new Set(this.unbuilt.map((city) => city.id));
    this.state = this.unbuilt.length ? withCities(state, this.unbuilt) : state;
    this.manifestId = id;
    this.loadedHas = has;
    const { release } = old;
    const timer: NodeJS.Timeout = setTimeout(() => {
      this.releasing.delete(timer);
      release();
    }, RELEASE_MS).unref();
    this.releasing.set(timer, release);
  }
}

const SERVED_ROLE: PathRole = { what: 'site directory', option: optionNamed('site') };

/**
 * What identifies a site's content: its manifest head (generator, settings, dataset hash) and the
 * manifest file itself (a build rewrites it whenever any file changed).
 */
async function manifestId(dir: string): Promise<string> {
  const { ino, size, mtimeMs } = await stat(join(dir, MANIFEST_PATH));
  return JSON.stringify([ino, size, mtimeMs, await readManifestHead(dir)]);
}
