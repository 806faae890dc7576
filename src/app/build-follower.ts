import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { siteSiblings } from '../fs/lock.js';
import { isAlive, readHolder } from '../fs/lock-holder.js';

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
 */
export class BuildFollower {
  private watcher: FSWatcher | undefined;
  private followTimer: NodeJS.Timeout | undefined;
  /** A live process holds the lock: `held` said once. */
  private external = false;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly steps: BuildSteps,
  ) {}

  async start(): Promise<void> {
    const names = [basename(siteSiblings(this.dir).lock), basename(this.dir)];
    this.watcher = watch(dirname(this.dir), (_, name) => {
      if (names.includes(name as string)) this.followBuild(50);
    });
    await this.checkBuild();
  }

  close(): void {
    this.watcher?.close();
    clearTimeout(this.followTimer);
    this.closed = true;
  }

  private followBuild(delay: number): void {
    clearTimeout(this.followTimer);
    if (this.closed) return;
    this.followTimer = setTimeout(() => void this.checkBuild(), delay).unref();
  }

  private async checkBuild(): Promise<void> {
    const holder = await readHolder(siteSiblings(this.dir).lock).catch(() => null);
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
