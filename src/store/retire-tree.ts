import type { Stats } from 'node:fs';
import { chmod, lstat, mkdir, readdir, rename, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MANIFEST_PATH } from '../site/manifest.js';
import { runBounded } from '../fs/run-bounded.js';
import type { SiteOwnership } from './foreign-files.js';

// The old tree, once the new site is in its place, is deleted entry by entry, never wholesale:
// only what the old site owned, and what was carried into the new site (the very inode), goes.
// Anything else in it was put in the site directory by someone after the build carried its
// entries over (a file saved, an editor's save by rename, a directory made): it is moved into the
// new site, not deleted. Where the new site has a file of its own, it stays in the old tree,
// which is kept, and said.

const IN_FLIGHT = 32;

export interface RetireOptions {
  /** What of the old tree was the old site's (deleted). */
  readonly owner: SiteOwnership;
  /** Whether the new site has a file of its own at a path (nothing of someone's is moved over it). */
  readonly inSite: (path: string) => boolean;
  /**
   * The inode carried into the new site for each entry of someone's (keepForeignFiles): that
   * entry is deleted, and one that replaced it in the old tree since moves over it. Without it
   * (a killed build's tree), an entry the site holds the same of is deleted, and none is moved over another.
   */
  readonly carried?: ReadonlyMap<string, number>;
}

export interface Retired {
  /** Entries of someone's that appeared in the old tree after the carry, moved into the site (directories end with `/`). */
  readonly moved: readonly string[];
  /** Entries of someone's left in the old tree (kept for them): the site has its own there. */
  readonly stranded: readonly string[];
  /** Why the old tree could not be deleted, when it could not and nothing of someone's was left in it. */
  readonly failure?: string;
}

/** Passes over the old tree while entries keep appearing in it (a process writing into a directory it has open). */
const PASSES = 3;

/** Deletes the old tree `old` of the site `site` as said above. */
export async function retireTree(old: string, site: string, options: RetireOptions): Promise<Retired> {
  const retirement = new Retirement(old, site, options);
  for (let pass = 0; pass < PASSES && retirement.clear(); pass++) {
    await retirement.dir('', 'directory');
    if (retirement.clear() && (await holdsOnlyManifest(old))) return retirement.finish();
  }
  return retirement.kept();
}

/** Whether the old tree holds nothing but the old site's manifest (the last to go). */
async function holdsOnlyManifest(old: string): Promise<boolean> {
  const meta = dirname(MANIFEST_PATH);
  if ((await readdir(old).catch(() => [])).some((name) => name !== meta)) return false;
  return (await readdir(join(old, meta)).catch(() => [])).every((name) => name === basename(MANIFEST_PATH));
}

/** What the site has where a directory of the old tree is: a real directory, nothing, or something else (a link, a file). */
type Where = 'directory' | 'nothing' | 'other';

class Retirement {
  private readonly moved: string[] = [];
  private readonly stranded: string[] = [];
  private failure: string | undefined;

  constructor(
    private readonly old: string,
    private readonly site: string,
    private readonly options: RetireOptions,
  ) {}

  /** Retires the directory `rel` of the old tree, where the site has `where`. */
  async dir(rel: string, where: Where): Promise<void> {
    const at = join(this.old, rel);
    const entries = await this.tried(async () => {
      // A read-only directory (someone's, carried with its permissions) is made writable to empty it.
      const { mode } = await lstat(at);
      if (!(mode & 0o200)) await chmod(at, (mode & 0o7777) | 0o700).catch(() => undefined);
      return readdir(at, { withFileTypes: true });
    });
    const deleted: string[] = [];
    const { owner } = this.options;
    for (const entry of entries ?? []) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (path === MANIFEST_PATH) continue; // the last to go: while it is there, a killed retirement is resumed alike
      if (entry.isDirectory()) await this.subdir(path, where);
      else if (owner.ownsFile(path) || owner.ownsDir(path)) deleted.push(path);
      else await this.foreign(path, where, deleted);
    }
    await runBounded(
      deleted,
      (path) => this.tried(() => unlink(join(this.old, path))).then(() => undefined),
      IN_FLIGHT,
    );
    if (rel) await rmdir(at).catch(() => undefined);
  }

  /** Whether nothing has stopped the retirement yet: no entry of someone's stranded, no failure. */
  clear(): boolean {
    return !this.stranded.length && this.failure === undefined;
  }

  /** The manifest last, then the directories left: the tree is gone. */
  async finish(): Promise<Retired> {
    await this.tried(() => unlink(join(this.old, MANIFEST_PATH)));
    await this.tried(() => rmdir(join(this.old, dirname(MANIFEST_PATH))));
    await this.tried(() => rmdir(this.old));
    return this.result(this.failure);
  }

  /** What was done, the tree kept (with its manifest): something of someone's is stranded in it, or something failed. */
  kept(): Retired {
    return this.result(this.failure ?? (this.stranded.length ? undefined : 'entries kept appearing in it'));
  }

  private result(failure: string | undefined): Retired {
    return { moved: this.moved, stranded: this.stranded, ...(failure !== undefined && { failure }) };
  }

  private async subdir(path: string, parent: Where): Promise<void> {
    const there = parent === 'directory' ? await lstat(join(this.site, path)).catch(() => null) : null;
    if (there) return this.dir(path, there.isDirectory() ? 'directory' : 'other');
    const { owner } = this.options;
    // A directory of someone's the site lacks was made after the carry (a carried one is in the site).
    if (parent !== 'other' && !owner.ownsDir(path) && !owner.ownsFile(path))
      return this.moveIn(path, parent, null, '/');
    return this.dir(path, parent === 'other' ? 'other' : 'nothing');
  }

  private async foreign(path: string, where: Where, deleted: string[]): Promise<void> {
    const here = await lstat(join(this.old, path)).catch(() => null);
    if (!here) return;
    const { carried } = this.options;
    const there = where === 'directory' ? await lstat(join(this.site, path)).catch(() => null) : null;
    if (carried ? carried.get(path) === here.ino : there !== null && sameEntry(here, there)) deleted.push(path);
    else await this.moveIn(path, where, there, '');
  }

  /** Moves an entry of someone's into the site: where nothing is, or over the very inode carried there. */
  private async moveIn(path: string, parent: Where, there: Stats | null, suffix: string): Promise<void> {
    const { carried, inSite } = this.options;
    const blocked = there && (there.isDirectory() || inSite(path) || carried?.get(path) !== there.ino);
    if (parent === 'other' || blocked) {
      this.stranded.push(path + suffix);
      return;
    }
    const to = join(this.site, path);
    try {
      // Its directories, where the site has none (below a real directory of the site's: no link is followed).
      if (parent === 'nothing') await mkdir(dirname(to), { recursive: true });
      await rename(join(this.old, path), to);
      this.moved.push(path + suffix);
    } catch {
      this.stranded.push(path + suffix);
    }
  }

  /** `task`'s result, or undefined with its failure recorded (the first one says why the tree stays). */
  private async tried<T>(task: () => Promise<T>): Promise<T | undefined> {
    try {
      return await task();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      this.failure ??= (error as Error).message;
      return undefined;
    }
  }
}

/** Whether two entries are one (a hard link), or a file and its copy (same size and mtime). */
function sameEntry(a: Stats, b: Stats): boolean {
  return a.ino === b.ino || (a.isFile() && b.isFile() && a.size === b.size && a.mtimeMs === b.mtimeMs);
}
