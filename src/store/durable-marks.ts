import { constants } from 'node:fs';
import { lstat, open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir } from '../fs/durable.js';
import { siteSiblings } from '../fs/lock.js';
import { MANIFEST_PATH } from '../site/manifest.js';

// What is known beside a site of how durable it is. `.NAME.durable`: the site in place was published
// by a durable build with every sync done, linked files included (a build without --durable takes
// it away before its swap: what it writes or links is left to the kernel's writeback). A durable
// build trusts the old tree's files to be on disk only under that mark: else it syncs those it
// links too. `.NAME.unsynced`: a durable build's sync failed after its swap (sync-failure.ts): the
// next durable build writes the site whole. Each mark can only err towards syncing more: the
// durable mark holds the identity of the manifest it was made for, and counts only as a regular
// file naming the manifest in place (a link or directory planted there, or a site replaced by
// other means since, e.g. restored from a copy, is not trusted to be on disk).

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

/** The manifest in place as a mark names it (a new tree's manifest is a new file: another inode). */
const manifestIdentity = (outDir: string): Promise<string | null> =>
  lstat(join(outDir, MANIFEST_PATH), { bigint: true }).then(
    (s) => `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`,
    () => null,
  );

/** The text of a regular file at `path`, never read through a link; null where there is none. */
async function markText(path: string): Promise<string | null> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
  if (!handle) return null;
  try {
    return (await handle.stat()).isFile() ? await handle.readFile('utf8') : null;
  } finally {
    await handle.close();
  }
}

/** Whether the site in place was published by a durable build with every sync done. */
export async function isDurable(outDir: string): Promise<boolean> {
  const [marked, identity] = await Promise.all([markText(siteSiblings(outDir).durable), manifestIdentity(outDir)]);
  return identity !== null && marked === identity;
}

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
  const identity = await manifestIdentity(outDir);
  if (identity === null) return;
  await rm(unsynced, { force: true })
    .then(() => rm(durable, { force: true }))
    .then(() => writeFile(durable, identity, { flag: 'wx' }))
    .then(() => syncDir(parent))
    .catch(() => undefined);
}
