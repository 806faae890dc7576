import { link, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CitiesApiError } from './errors.js';
import { writeNew } from './file-output.js';

/** Sibling paths a build uses next to its site directory (same filesystem, so renames are atomic). */
export function siteSiblings(outDir: string) {
  const parent = dirname(outDir);
  const name = basename(outDir);
  return {
    lock: join(parent, `.${name}.lock`),
    staging: join(parent, `.${name}.staging-${process.pid}`),
    previous: join(parent, `.${name}.previous-${process.pid}`),
    /** Kept beside the site for good: the stat records of its files (see stat-cache.ts). */
    statCache: join(parent, `.${name}.stat-cache`),
    prefix: `.${name}.`,
    parent,
  };
}

/** Locks this process holds or is taking, so two builds in one process exclude each other too. */
const claimed = new Set<string>();

/**
 * Takes the site's build lock (a file holding the builder's pid), so two builds never interleave:
 * a second build fails with a clear message while the first is alive; a dead builder's lock is taken over.
 * The lock appears with its pid already in it (a draft file hard-linked into place), so it is never
 * seen empty; a dead builder's lock is replaced (one rename, so it never disappears) by one taker at
 * a time, the one holding `.NAME.lock.takeover`.
 */
export async function lockSite(outDir: string): Promise<() => Promise<void>> {
  const { lock } = siteSiblings(outDir);
  if (claimed.has(lock)) throw busy(outDir, process.pid, lock);
  claimed.add(lock);
  const draft = `${lock}-${process.pid}`;
  const takeover = `${lock}.takeover`;
  const release = async () => {
    await rm(lock, { force: true });
    claimed.delete(lock);
  };
  try {
    await writeNew(draft, Buffer.from(`${process.pid}\n`));
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await linked(draft, lock)) return release;
      const holder = await readHolder(lock);
      if (holder === null) continue;
      if (isOther(holder)) throw busy(outDir, holder, lock);
      if (!(await linked(draft, takeover))) {
        const taker = await readHolder(takeover);
        if (taker !== null && isOther(taker)) throw busy(outDir, taker, lock);
        if (taker !== null) await removeStale(takeover);
        continue;
      }
      try {
        const still = await readHolder(lock);
        if (still === null) continue;
        if (isOther(still)) throw busy(outDir, still, lock);
        await rename(draft, lock);
        return release;
      } finally {
        await rm(takeover, { force: true });
      }
    }
    throw new CitiesApiError(`cannot take the build lock ${lock}`);
  } catch (error) {
    claimed.delete(lock);
    throw error;
  } finally {
    await rm(draft, { force: true });
  }
}

/** A live process other than this one (a lock holding this pid is a dead process's whose pid was reused). */
const isOther = (pid: number) => pid !== process.pid && isAlive(pid);

function busy(outDir: string, holder: number, lock: string): CitiesApiError {
  return new CitiesApiError(`another build of ${outDir} is running (pid ${holder}); wait for it to finish (lock: ${lock})`);
}

/** Creates `to` as a hard link of `from`; false when `to` exists. */
async function linked(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** The pid in a lock file (0 when unreadable), or null when there is no such file. */
async function readHolder(file: string): Promise<number | null> {
  try {
    return Number((await readFile(file, 'utf8')).trim()) || 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Deletes a dead taker's takeover file, unless a live one replaced it meanwhile (then it is put back). */
async function removeStale(file: string): Promise<void> {
  const aside = `${file}-${process.pid}`;
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const taker = await readHolder(aside);
  if (taker !== null && isOther(taker)) await linked(aside, file);
  await rm(aside, { force: true });
}

export function isAlive(pid: number): boolean {
  // 0 and negative numbers name process groups, not a builder (an unreadable lock holds 0).
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
