import { lstat, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BEHIND_PATH, BEHIND_TEXT } from '../site/behind.js';
import { syncDir, syncDirectories, syncFile } from '../fs/durable.js';
import { MANIFEST_PATH } from '../site/manifest.js';
import { unmarkDurable } from './durable-marks.js';

// A new site tree put in place of the old with two renames: the old one moved aside (retire-tree.ts
// then deletes it), back in place if the new one cannot be moved in. A durable build has what the
// renames publish on disk first (every file written synced, then every directory), so that a power
// loss or a system crash, not only a kill, brings back the old site or the new one, whole.

/**
 * The path the old tree is moved aside to: this process's, unless an old tree it kept (it could
 * not be deleted, or someone's file is stranded in it) is there: then `.1`, `.2`, ...
 */
export async function asidePath(path: string): Promise<string> {
  for (let n = 0; ; n++) {
    const name = n ? `${path}.${n}` : path;
    if (!(await lstat(name).catch(() => null))) return name;
  }
}

/**
 * Makes a new tree's entries durable before it is swapped in (its files are synced as written):
 * each directory holding its files (`files`: relative), its manifest, or what it carried of the
 * old tree's (`kept`: a directory ends with `/`; `carried`), and their parents up to `staging`.
 * `syncCarried`: the regular files carried are synced too (the old tree was not a durable build's:
 * a user's file in it may never have reached the disk), each but one this process may not open.
 */
export async function syncTree(
  staging: string,
  files: Iterable<string>,
  kept: readonly string[],
  carried: ReadonlyMap<string, number>,
  syncCarried = false,
): Promise<void> {
  const dirs = [...files, dirname(MANIFEST_PATH), ...[...carried.keys()].map(dirname)];
  for (const path of kept) dirs.push(path.endsWith('/') ? path.slice(0, -1) : dirname(path));
  if (syncCarried) for (const path of kept) await syncCarriedFile(join(staging, path));
  await syncDirectories(staging, dirs);
}

async function syncCarriedFile(path: string): Promise<void> {
  if (path.endsWith('/') || !(await lstat(path).catch(() => null))?.isFile()) return;
  await syncFile(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EACCES' && error.code !== 'EPERM') throw error;
  });
}

/**
 * Moves the old site aside and the new one in (the old one back if that fails); whether there was
 * an old one. `behind`, when given, is whether the new site comes in marked behind its dataset
 * (BEHIND_PATH), as the build's check decided holding the dataset's lock: the marker is put in
 * or taken out of the new tree first, and the old tree's (a POST may have put one there after the
 * build carried its entries over) is dropped, never moved into the new site by its retirement.
 * A tree not `durable` takes away the site's durable mark first.
 */
export async function swapIn(
  outDir: string,
  staging: string,
  previous: string,
  { behind, durable }: { behind?: boolean | undefined; durable?: boolean | undefined },
): Promise<boolean> {
  if (behind !== undefined) await markTree(staging, behind, !!durable);
  if (!durable) await unmarkDurable(outDir);
  const hadOld = await renamed(outDir, staging, previous);
  if (behind !== undefined && hadOld) await rm(join(previous, BEHIND_PATH), { force: true });
  return hadOld;
}

/** The tree `dir` marked behind its dataset, or not; `durable`: synced (its other directories are already). */
async function markTree(dir: string, behind: boolean, durable: boolean): Promise<void> {
  const marker = join(dir, BEHIND_PATH);
  if (behind) {
    await mkdir(dirname(marker), { recursive: true });
    await writeFile(marker, BEHIND_TEXT);
    if (durable) await syncFile(marker);
  } else if (await lstat(marker).catch(() => null)) await rm(marker, { force: true });
  else return;
  if (durable) await syncDir(dirname(marker));
}

/** The two renames. */
async function renamed(outDir: string, staging: string, previous: string): Promise<boolean> {
  let hadOld = true;
  try {
    await rename(outDir, previous);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    hadOld = false;
  }
  try {
    await rename(staging, outDir);
  } catch (error) {
    if (hadOld) await rename(previous, outDir);
    throw error;
  }
  return hadOld;
}
