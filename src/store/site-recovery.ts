import { lstat, rename } from 'node:fs/promises';
import { join } from 'node:path';
import fg from 'fast-glob';
import { lockSite, siteSiblings } from '../fs/lock.js';
import { isAlive } from '../fs/lock-holder.js';
import { removeTree } from '../fs/remove-tree.js';

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
 * arrived, the previous site is moved back (only a real directory: never a link of that name);
 * staging trees, lock drafts and stat cache drafts of dead builders are removed (a link is
 * unlinked, never followed). Call it holding the build lock.
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
  const exists = (path: string) =>
    lstat(path).then(
      () => true,
      () => false,
    );
  for (const name of leftovers.sort()) {
    const pid = Number.parseInt(name.slice(name.lastIndexOf('-') + 1), 10);
    if (pid !== process.pid && isAlive(pid)) continue;
    const path = join(parent, name);
    if (name.includes('.previous-') && !(await exists(outDir)) && (await lstat(path)).isDirectory())
      await rename(path, outDir);
    // What cannot be deleted (permissions) stays: it is in no build's way, and the next one tries again.
    else await removeTree(path).catch(() => undefined);
  }
}
