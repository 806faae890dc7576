import type { Dir } from 'node:fs';
import { chmod, lstat, opendir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { runBounded } from './run-bounded.js';

const IN_FLIGHT = 32;

/**
 * Deletes a directory tree (nothing when it does not exist) with a bounded number of unlinks in
 * flight. `fs.rm({ recursive: true })` starts one unlink per entry of a directory at once: on a
 * site of 400,000 files that costs hundreds of MB. Never follows a symbolic link: a link, at the
 * top or anywhere inside, is unlinked itself and what it points to is left alone.
 */
export async function removeTree(dir: string): Promise<void> {
  try {
    const stats = await lstat(dir);
    if (!stats.isDirectory()) return await unlink(dir);
    // A read-only directory (someone's, carried into a site with its permissions) is made writable to empty it.
    if (!(stats.mode & 0o200)) await chmod(dir, (stats.mode & 0o7777) | 0o700).catch(() => undefined);
  } catch (error) {
    return ignoreMissing(error as NodeJS.ErrnoException);
  }
  let entries: Dir;
  try {
    entries = await opendir(dir);
  } catch (error) {
    return ignoreMissing(error as NodeJS.ErrnoException);
  }
  const subdirectories: string[] = [];
  async function* files() {
    for await (const entry of entries) {
      if (entry.isDirectory()) subdirectories.push(join(dir, entry.name));
      else yield join(dir, entry.name);
    }
  }
  await runBounded(files(), (path) => unlink(path).catch(ignoreMissing), IN_FLIGHT);
  for (const subdirectory of subdirectories) await removeTree(subdirectory);
  await rmdir(dir).catch(ignoreMissing);
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
