import { lstatSync, unlinkSync, type Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { linkEntry, reuse, type FileStat } from '../fs/file-output.js';
import { VARIANTS } from './compression.js';
import { holdsBytes } from './site-check.js';
import { RealDirs } from './stat-check.js';
import type { StatCache } from './stat-cache.js';
import type { Slot } from './stat-cache-format.js';

/** The previous build's tree, whose files a build links into its staging tree when they can be trusted. */
export class OldTree {
  private readonly dirs: RealDirs;

  constructor(
    private readonly outDir: string,
    private readonly staging: string,
    private readonly cache: StatCache | null,
    private readonly ensureDir: (dir: string) => Promise<unknown>,
  ) {
    this.dirs = new RealDirs(outDir);
  }

  /** Links the old file into staging if it can be trusted to hold the entry's bytes (`hash`, and `bytes` when in one buffer); its stats, or null. */
  async reuse(path: string, slot: Slot, hash: string, bytes: Uint8Array | undefined): Promise<FileStat | null> {
    const name = slot ? path + VARIANTS[slot - 1] : path;
    if (!this.dirs.ok(dirname(path))) return null;
    const from = join(this.outDir, name);
    const to = join(this.staging, name);
    await this.ensureDir(dirname(to));
    // Its record is compared before the link (which moves the ctime), then what was linked is
    // checked to be that file (else its bytes are read): nothing can replace it unseen between
    // the check and the link. Anything else linked is unlinked again.
    const { cache } = this;
    const prior = cache ? lstatSync(from, { throwIfNoEntry: false }) : undefined;
    const vouched = !!prior?.isFile() && !!cache?.matches(path, slot, prior);
    const linked = linkEntry(from, to);
    if (linked === null) return null;
    if (linked) {
      if (
        linked.isFile() &&
        ((vouched && sameFile(prior!, linked)) || (await holdsBytes(to, slot, linked.size, hash, bytes)))
      )
        return linked;
      unlinkSync(to);
      return null;
    }
    // Where it cannot be linked: checked, then copied.
    const stats = await lstat(from).catch(() => null);
    if (!stats?.isFile()) return null;
    if (!cache?.matches(path, slot, stats) && !(await holdsBytes(from, slot, stats.size, hash, bytes))) return null;
    return reuse(from, to, stats);
  }
}

/** Whether two lstats are of the same file, unchanged but for its ctime (a link moves it). */
function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}
