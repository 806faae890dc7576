import { constants, type Dirent } from 'node:fs';
import { chmod, copyFile, link, lstat, mkdir, readdir, readlink, symlink, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syncFile } from '../fs/durable.js';
import { CitiesApiError } from '../core/errors.js';
import { VARIANTS } from './compression.js';
import { BEHIND_PATH } from '../site/behind.js';
import { MANIFEST_PATH } from '../site/manifest.js';
import type { SiteFiles } from './manifest-file.js';

// A site directory may hold entries that are not the site's: someone's notes, a dataset, a
// link, an empty directory. A build replaces the site's own files only: what its manifest lists
// (with the `.gz`/`.br` of its pages, and the manifest itself). Everything else is carried into the
// new tree (hard links: nothing is copied, nothing is ever followed), so it survives the swap.

/** Which paths of a directory the site built there owns, from its manifest. */
export class SiteOwnership {
  private readonly dirs = new Set<string>();

  constructor(private readonly site: Pick<SiteFiles, 'settings' | 'files'> | null) {
    if (!site) return;
    for (let i = -1; i < site.files.size; i++) {
      const path = i < 0 ? MANIFEST_PATH : site.files.path(i);
      for (let dir = dirname(path); dir !== '.' && !this.dirs.has(dir); dir = dirname(dir)) this.dirs.add(dir);
    }
  }

  /**
   * The manifest, a listed file, or in a compressed site the `.gz`/`.br` of a listed file: a
   * compressed copy of the site's file is the site's (kept, it would go stale when the file changes).
   */
  ownsFile(path: string): boolean {
    if (!this.site) return false;
    if (path === MANIFEST_PATH || this.site.files.find(path) >= 0) return true;
    const variant = VARIANTS.find((v) => path.endsWith(v));
    return (
      !!variant &&
      this.site.settings.compression !== 'none' &&
      this.site.files.find(path.slice(0, -variant.length)) >= 0
    );
  }

  /** A directory holding some file the site owns. */
  ownsDir(path: string): boolean {
    return this.dirs.has(path);
  }
}

export interface OldTree {
  /** Files of the old site the new one does not have (they go with the old tree). */
  readonly removed: number;
  /** Entries that are not the site's, carried into the new tree (directories end with `/`). */
  readonly kept: readonly string[];
  /** The inode of each entry that is not the site's (a directory's aside) as it was carried: the old tree's entry while it is that one. */
  readonly carried: ReadonlyMap<string, number>;
}

/**
 * Walks the old site (never following a link): counts the site's files the new one drops and
 * hard-links every entry that is not the site's into `staging`. An entry of someone's where the
 * new site has a file stops the build (exit 2; the old site is left as it was).
 */
export async function keepForeignFiles(
  outDir: string,
  staging: string,
  owner: SiteOwnership,
  inNewSite: (path: string) => boolean,
): Promise<OldTree> {
  let removed = 0;
  const kept: string[] = [];
  const carried = new Map<string, number>();
  const conflicts: string[] = [];
  const carry = (path: string, kind: Kind) =>
    carryOne(join(outDir, path), join(staging, path), kind).then(
      (ino) => {
        // A writable server's behind marker is carried too, but it is not someone's to be told of.
        if (path !== BEHIND_PATH) kept.push(kind === 'directory' ? `${path}/` : path);
        if (ino !== undefined) carried.set(path, ino);
      },
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST' && error.code !== 'ENOTDIR') throw error;
        conflicts.push(path);
      },
    );
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(join(outDir, dir), { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
      throw error;
    });
    const mine = dir === '' || owner.ownsDir(dir) || owner.ownsFile(dir);
    if (!entries.length && !mine) await carry(dir, 'directory');
    for (const entry of entries) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path);
      else if (owner.ownsFile(path) || owner.ownsDir(path)) removed += inNewSite(path) ? 0 : 1;
      else await carry(path, kindOf(entry));
    }
    // A directory of someone's keeps its permissions in the new tree.
    if (!mine) await chmod(join(staging, dir), (await lstat(join(outDir, dir))).mode & 0o7777).catch(() => undefined);
  };
  await walk('');
  if (conflicts.length) {
    const some = conflicts
      .slice(0, 5)
      .map((path) => join(outDir, path))
      .join(', ');
    throw new CitiesApiError(
      `${some}${conflicts.length > 5 ? ` and ${conflicts.length - 5} more` : ''}: not the site's (its manifest does not list ${conflicts.length > 1 ? 'them' : 'it'}), ` +
        `but the new site has a file or directory there; move ${conflicts.length > 1 ? 'them' : 'it'} out of ${outDir} and build again (the site was left as it was)`,
      2,
    );
  }
  return { removed, kept: kept.sort(), carried };
}

type Kind = 'directory' | 'link' | 'file' | 'other';
const kindOf = (entry: Dirent): Kind => (entry.isSymbolicLink() ? 'link' : entry.isFile() ? 'file' : 'other');

/**
 * Puts one entry of someone's into the new tree: a hard link (of a link itself, never its target),
 * or a copy where links are refused; the inode carried (none for a directory, made anew).
 */
async function carryOne(from: string, to: string, kind: Kind): Promise<number | undefined> {
  if (kind === 'directory') {
    const made = await mkdir(to, { recursive: true });
    if (made === undefined && !(await lstat(to)).isDirectory())
      throw Object.assign(new Error(`${to} exists`), { code: 'EEXIST' });
    return undefined;
  }
  await mkdir(dirname(to), { recursive: true });
  try {
    await link(from, to);
    return (await lstat(to)).ino;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'EXDEV' && code !== 'EMLINK') throw error;
    const source = await lstat(from);
    if (kind === 'link') await symlink(await readlink(from), to);
    else if (kind !== 'file') throw error;
    else {
      await copyFile(from, to, constants.COPYFILE_EXCL);
      await utimes(to, source.atime, source.mtime);
      // Theirs: never lost by a power loss after the old tree that held it is deleted.
      await syncFile(to);
    }
    return source.ino;
  }
}
