import { lstat, readdir, rename } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { deadDrafts, removeDraft } from '../fs/dead-drafts.js';
import { lockSite, siteSiblings } from '../fs/lock.js';
import { isAlive, isLiveHolder, whoHolds } from '../fs/lock-holder.js';
import { removeTree } from '../fs/remove-tree.js';
import { SiteOwnership } from './foreign-files.js';
import { readSiteFiles } from './manifest-file.js';
import { retireTree } from './retire-tree.js';
import { statCacheDrafts } from './stat-records.js';

/**
 * Holding the build lock, repairs what killed builds left beside a site that needs no writing.
 * With nothing to repair (nearly always) it takes no lock: a site up to date on a read-only
 * filesystem, or a full disk, is up to date all the same. `locked`: the caller holds it already.
 */
export async function tidySite(outDir: string, locked = false): Promise<void> {
  // (A dead builder's lock counts: taking the lock replaces it, and releasing it removes it.)
  const holder = await whoHolds(siteSiblings(outDir).lock).catch(() => null);
  if (!(await leftovers(outDir)).length && (holder === null || isLiveHolder(holder))) return;
  const release = locked ? async () => {} : await lockSite(outDir);
  try {
    await recoverSite(outDir);
  } finally {
    await release();
  }
}

/** The siblings a build names `.NAME.KIND-PID`: its staging and previous trees, and lock drafts (its stat cache's drafts: statCacheDrafts). */
const KINDS = ['staging', 'previous', 'lock'] as const;

/** The names in the site's parent directory (none when it is gone). */
async function entriesOf(parent: string): Promise<string[]> {
  return readdir(parent).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
    throw error;
  });
}

/**
 * What killed builds (dead processes, or this one) left beside the site: names in its parent
 * directory, and the stat cache's drafts whose writer is gone (dead-drafts.ts). Trees of this
 * process's pid are a killed build's (the caller holds the lock no other thread of it can hold); a
 * lock draft of this pid may be another thread's, taking the lock right now, and is only its
 * taker's to remove (lock-file.ts, always): one a dead process of this pid left is in no taker's
 * way (each removes its own draft's name before writing it), and a process of another pid removes it.
 */
async function leftovers(outDir: string): Promise<string[]> {
  const { parent, prefix } = siteSiblings(outDir);
  const names = (await entriesOf(parent)).filter((name) => KINDS.some((kind) => name.startsWith(`${prefix}${kind}-`)));
  const drafts = await deadDrafts([statCacheDrafts(outDir)]);
  const ours = names.filter((name) => {
    // Only names a build gives (`-PID`, a kept previous tree's or a thread's lock draft `-PID.N`): a user's `.site.staging-old` is not ours.
    const tail = /-([1-9]\d*)(\.[1-9]\d*)?$/.exec(name);
    if (!tail || (tail[2] && !/^(previous|lock)-/.test(name.slice(prefix.length)))) return false;
    const pid = Number(tail[1]);
    return pid === process.pid ? !isLockDraft(outDir, name) : !isAlive(pid);
  });
  // A lock draft is a file: a directory of its name is someone's.
  const files = await Promise.all(
    ours.map(
      async (name) => !isLockDraft(outDir, name) || !(await lstat(join(parent, name)).catch(() => null))?.isDirectory(),
    ),
  );
  return [...ours.filter((_, i) => files[i]), ...drafts.map(({ path }) => basename(path))];
}

/** Whether `name` (of a leftover) is a lock draft's (`.NAME.lock-PID`, `.NAME.lock-PID.N`). */
const isLockDraft = (outDir: string, name: string) => name.startsWith(`${siteSiblings(outDir).prefix}lock-`);

/**
 * Repairs what a killed build can leave: if the site was moved aside but the new one never
 * arrived, the previous site (the newest tree set aside) is moved back (only a real directory:
 * never a link of that name); any other previous tree is retired as the build would have
 * (retire-tree.ts: what was put in it after the carry moves into the site); staging trees, lock
 * drafts and stat cache drafts of dead builders are removed (a link is unlinked, never followed).
 * Call it holding the build lock.
 */
export async function recoverSite(outDir: string): Promise<void> {
  const { parent, statCache } = siteSiblings(outDir);
  const ours = await leftovers(outDir);
  const found = await Promise.all(
    ours.map(async (name) => ({ name, stats: await lstat(join(parent, name)).catch(() => null) })),
  );
  const previous = found
    .filter(({ name, stats }) => name.includes('.previous-') && stats?.isDirectory())
    .sort((a, b) => b.stats!.ctimeMs - a.stats!.ctimeMs);
  // Killed between its two renames, a build left the site aside: the tree set aside last (a rename
  // moves its ctime), not one kept earlier for what could not be deleted or moved out of it.
  const restored = previous.length && !(await lstat(outDir).catch(() => null)) ? previous[0]!.name : undefined;
  if (restored) await rename(join(parent, restored), outDir);
  for (const name of ours.sort()) {
    const path = join(parent, name);
    if (name === restored) continue;
    if (previous.some((tree) => tree.name === name)) await retirePrevious(path, outDir);
    // A file's draft, never a directory of its name (someone's); what cannot be deleted (permissions)
    // stays: it is in no build's way, and the next one tries again.
    else if (name.startsWith(`${basename(statCache)}-`) || isLockDraft(outDir, name)) await removeDraft(path);
    else await removeTree(path).catch(() => undefined);
  }
}

/**
 * A killed build's previous tree, the site in place: deleted but for what someone put in it while
 * the build ran. Without its manifest (deleted last) it holds only empty directories.
 */
async function retirePrevious(previous: string, outDir: string): Promise<void> {
  const old = await readSiteFiles(previous).catch(() => null);
  if (!old) return removeTree(previous).catch(() => undefined);
  const site = await readSiteFiles(outDir).catch(() => null);
  const owns = new SiteOwnership(site);
  // Without the site's manifest, every path counts as the site's: nothing is moved over anything.
  const inSite = (path: string) => !site || owns.ownsFile(path);
  await retireTree(previous, outDir, { owner: new SiteOwnership(old), inSite });
}
