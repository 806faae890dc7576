import { lstat, rm, writeFile } from 'node:fs/promises';
import { syncDir } from '../fs/durable.js';
import { siteSiblings } from '../fs/lock.js';

// What is known beside a site of how durable it is. `.NAME.durable`: the site in place was published
// by a durable build with every sync done, linked files included (a build without --durable takes
// it away before its swap: what it writes or links is left to the kernel's writeback). A durable
// build trusts the old tree's files to be on disk only under that mark: else it syncs those it
// links too. `.NAME.unsynced`: a durable build's sync failed after its swap (sync-failure.ts): the
// next durable build writes the site whole. Each mark can only err towards syncing more.

/** A mark made where none is, never through a link found at its path (O_EXCL): one already there is kept. */
const create = (path: string) =>
  writeFile(path, '', { flag: 'wx' }).catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
  });

const present = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

/** Whether the site in place was published by a durable build with every sync done. */
export const isDurable = (outDir: string): Promise<boolean> => present(siteSiblings(outDir).durable);

/** Whether the site was published by a durable build whose syncs did not all succeed. */
export const isUnsynced = (outDir: string): Promise<boolean> => present(siteSiblings(outDir).unsynced);

/**
 * Before a build without --durable swaps its tree in: the site is no longer marked durable, on disk
 * before the swap (a power loss must not bring the mark back beside the new tree).
 */
export async function unmarkDurable(outDir: string): Promise<void> {
  const { durable, parent } = siteSiblings(outDir);
  if (!(await present(durable))) return;
  await rm(durable, { force: true });
  await syncDir(parent);
}

/** Marks the site as published without its syncs done (best effort: a disk that fails may refuse this too). */
export async function markUnsynced(outDir: string): Promise<void> {
  const { durable, unsynced } = siteSiblings(outDir);
  await rm(durable, { force: true }).catch(() => undefined);
  await create(unsynced).catch(() => undefined);
}

/**
 * A durable build published its site and synced the site's parent: the failure mark goes, the
 * durable mark comes, and the parent is synced again so that a power loss brings neither back.
 * Best effort: the site is on disk already, and a mark lost or come back only costs syncs.
 */
export async function markDurable(outDir: string): Promise<void> {
  const { durable, unsynced, parent } = siteSiblings(outDir);
  await rm(unsynced, { force: true })
    .then(() => create(durable))
    .then(() => syncDir(parent))
    .catch(() => undefined);
}
