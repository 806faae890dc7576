import { open, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CitiesApiError } from './errors.js';

/** Sibling paths a build uses next to its site directory (same filesystem, so renames are atomic). */
export function siteSiblings(outDir: string) {
  const parent = dirname(outDir);
  const name = basename(outDir);
  return {
    lock: join(parent, `.${name}.lock`),
    staging: join(parent, `.${name}.staging-${process.pid}`),
    previous: join(parent, `.${name}.previous-${process.pid}`),
    prefix: `.${name}.`,
    parent,
  };
}

/**
 * Takes the site's build lock (a file holding the builder's pid), so two builds never interleave:
 * a second build fails with a clear message while the first is alive; a dead builder's lock is taken over.
 */
export async function lockSite(outDir: string): Promise<() => Promise<void>> {
  const { lock } = siteSiblings(outDir);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(lock, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => rm(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
    if (holder && holder !== process.pid && isAlive(holder)) {
      throw new CitiesApiError(`another build of ${outDir} is running (pid ${holder}); wait for it to finish (lock: ${lock})`);
    }
    await rm(lock, { force: true });
  }
  throw new CitiesApiError(`cannot take the build lock ${lock}`);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
