import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { basename, dirname, join } from 'node:path';
import { MANIFEST_PATH } from './manifest.js';
import { loadSite, type SiteState } from './site-state.js';

/**
 * The site a server answers from, kept consistent while its files change: while a build (ours
 * or another process's, seen by its lock file) replaces the tree, a file could change between
 * its lookup and its read, so answers are computed live from the data in memory; once the new
 * tree is in place it is loaded and files are served again.
 */
export class LiveSite {
  private state: SiteState;
  private replacing = 0;
  private readonly sending = new Set<ServerResponse>();
  private watcher: FSWatcher | undefined;
  /** Which manifest file the state was loaded from: a build writes a new one when anything changed. */
  private manifestId = '';

  private constructor(private readonly dir: string, state: SiteState) {
    this.state = state;
  }

  static async open(dir: string): Promise<LiveSite> {
    const site = new LiveSite(dir, await loadSite(dir));
    site.manifestId = await manifestId(dir);
    return site;
  }

  get current(): SiteState {
    return this.replacing ? { ...this.state, context: { ...this.state.context, useFiles: false } } : this.state;
  }

  /** Marks a response as streaming a site file until it finishes. */
  track(res: ServerResponse): void {
    this.sending.add(res);
    res.once('close', () => this.sending.delete(res));
  }

  /** Runs `replace` (which rewrites the site's files) with files unused, then loads the new site. */
  async replace(replace: () => Promise<void>): Promise<void> {
    this.replacing++;
    try {
      while (this.sending.size) await new Promise((resolve) => setTimeout(resolve, 5));
      await replace();
      await this.reload();
    } finally {
      this.replacing--;
    }
  }

  /** Follows builds made by other processes: files unused while their lock exists, reloaded after. */
  watchBuilds(): void {
    const parent = dirname(this.dir);
    const lock = `.${basename(this.dir)}.lock`;
    let external = false;
    let timer: NodeJS.Timeout | undefined;
    this.watcher = watch(parent, (_, name) => {
      if (name !== lock && name !== basename(this.dir)) return;
      if (name === lock && !external) {
        external = true;
        this.replacing++;
      }
      clearTimeout(timer);
      timer = setTimeout(() => void this.settleExternal().then((done) => {
        if (done && external) {
          external = false;
          this.replacing--;
        }
      }), 50);
    });
  }

  close(): void {
    this.watcher?.close();
  }

  private async settleExternal(): Promise<boolean> {
    const locked = await readFile(join(dirname(this.dir), `.${basename(this.dir)}.lock`)).then(() => true, () => false);
    if (locked) return false;
    await this.reload().catch(() => undefined);
    return true;
  }

  private async reload(): Promise<void> {
    const id = await manifestId(this.dir);
    if (id === this.manifestId) return;
    this.state = await loadSite(this.dir);
    this.manifestId = id;
  }
}

async function manifestId(dir: string): Promise<string> {
  const { ino, size, mtimeMs } = await stat(join(dir, MANIFEST_PATH));
  return `${ino}:${size}:${mtimeMs}`;
}
