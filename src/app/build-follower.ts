import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { siteSiblings } from '../fs/lock.js';
import { isAlive, readHolder } from '../fs/lock-holder.js';
import { resolveSiteDir } from '../store/site-path.js';

/** How often a held build lock is looked at again (its holder may have died). */
const POLL_MS = 250;

/** What the served site does as another process's build starts and ends (live-site.ts). */
export interface BuildSteps {
  /** A live process has taken the build lock: the site's files go unused. */
  held(): void;
  /** No live process holds the lock (at start, and after each change seen): the site loaded again if it changed. */
  free(): Promise<void>;
  /** The lock `held` was said for is released, once `free` is done. */
  released(): void;
}

/**
 * Follows builds made by other processes into a site, through its build lock: `held` while a live
 * process holds it (already at start, or from when it appears), `free` then `released` once it is
 * released. A lock whose holder is dead (a build killed with SIGKILL leaves it) is ignored: it is
 * looked at again every POLL_MS while held, since the holder's death changes no file.
 * A build resolves the site's path (a symbolic link to it, or in a parent) and locks beside the
 * real directory: the lock is looked for there, the link's own directory watched too (retargeted).
 */
export class BuildFollower {
  private watchers: FSWatcher[] = [];
  /** The real directory whose lock is followed (re-resolved at each look: a link may be retargeted). */
  private real = '';
  private followTimer: NodeJS.Timeout | undefined;
  /** A live process holds the lock: `held` said once. */
  private external = false;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly steps: BuildSteps,
  ) {}

  async start(): Promise<void> {
    await this.checkBuild();
  }

  close(): void {
    for (const watcher of this.watchers) watcher.close();
    clearTimeout(this.followTimer);
    this.closed = true;
  }

  /** Watches the real directory's parent (its lock, its name) and the path as given (a link retargeted), when the real path moved. */
  private async follow(): Promise<string> {
    const real = await resolveSiteDir(this.dir).catch(() => resolve(this.dir));
    if (real === this.real || this.closed) return real;
    this.real = real;
    for (const watcher of this.watchers) watcher.close();
    const names = new Map<string, string[]>([[dirname(real), [basename(siteSiblings(real).lock), basename(real)]]]);
    const given = resolve(this.dir);
    names.set(dirname(given), [...(names.get(dirname(given)) ?? []), basename(given)]);
    this.watchers = [...names].flatMap(([parent, watched]) => {
      try {
        return [watch(parent, (_, name) => watched.includes(name as string) && this.followBuild(50))];
      } catch {
        return []; // (a parent gone: the served path is then none to follow)
      }
    });
    return real;
  }

  private followBuild(delay: number): void {
    clearTimeout(this.followTimer);
    if (this.closed) return;
    this.followTimer = setTimeout(() => void this.checkBuild(), delay).unref();
  }

  private async checkBuild(): Promise<void> {
    const real = await this.follow();
    const holder = await readHolder(siteSiblings(real).lock).catch(() => null);
    if (holder !== null && isAlive(holder)) {
      if (!this.external) {
        this.external = true;
        this.steps.held();
      }
      return this.followBuild(POLL_MS);
    }
    await this.steps.free();
    if (this.external) {
      this.external = false;
      this.steps.released();
    }
  }
}
