import { lstat, rename } from 'node:fs/promises';
import { join } from 'node:path';
import fg from 'fast-glob';
import { lockSite, siteSiblings } from '../fs/lock.js';
import { isAlive } from '../fs/lock-holder.js';
import { removeTree } from '../fs/remove-tree.js';
import { SiteOwnership } from './foreign-files.js';
import { readSiteFiles } from './manifest-file.js';
import { retireTree } from './retire-tree.js';

/** Holding the build lock, repairs what killed builds left beside a site that needs no writing. */
export async function tidySite(outDir: string): Promise<void> {
  const release = await lockSite(outDir);
  try {
    await recoverSite(outDir);
  } finally {
    await release();
  }
}

/**
 * Repairs what a killed build can leave: if the site was moved aside but the new one never
 * arrived, the previous site (the newest tree set aside) is moved back (only a real directory:
 * never a link of that name); any other previous tree is retired as the build would have
 * (retire-tree.ts: what was put in it after the carry moves into the site); staging trees, lock
 * drafts and stat cache drafts of dead builders are removed (a link is unlinked, never followed).
 * Call it holding the build lock.
 */
export async function recoverSite(outDir: string): Promise<void> {
  const { parent, prefix } = siteSiblings(outDir);
  const leftovers = await fg(`${fg.escapePath(prefix)}{staging,previous,lock,stat-cache}-*`, {
    cwd: parent,
    dot: true,
    onlyFiles: false,
    deep: 1,
    followSymbolicLinks: false,
  });
  const ours = leftovers.filter((name) => {
    const pid = Number.parseInt(name.slice(name.lastIndexOf('-') + 1), 10);
    return pid === process.pid || !isAlive(pid);
  });
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
    // What cannot be deleted (permissions) stays: it is in no build's way, and the next one tries again.
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
