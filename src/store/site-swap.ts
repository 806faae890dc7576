import { lstat, rename } from 'node:fs/promises';

// A new site tree put in place of the old with two renames: the old one moved aside (retire-tree.ts
// then deletes it), back in place if the new one cannot be moved in.

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

/** Moves the old site aside and the new one in (the old one back if that fails); whether there was an old one. */
export async function swapIn(outDir: string, staging: string, previous: string): Promise<boolean> {
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
