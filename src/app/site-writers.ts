import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive } from '../fs/lock-holder.js';
import { siteSiblings } from '../fs/lock.js';
import { resolveSiteDir } from '../store/site-path.js';

// Which writable servers serve a site: each keeps `.NAME.writer-PID-TAG` beside the site directory
// (TAG tells two of one process apart) from before it logs a city until it has stopped and folded
// what it logged into the dataset file. The site's behind marker means "its files lack cities its
// own server acknowledged" (behind-site.ts): a build that meets cities logged since it read the
// dataset keeps the site marked only where such a server may have acknowledged them.

/**
 * The records of the writers of the site whose real directory is `site`: their paths and pids.
 * Synchronous: read at a swap under the dataset's lock, which POSTs wait for, while libuv's thread
 * pool may be busy with a build's writes.
 */
function writersOf(site: string): { path: string; pid: number }[] {
  const { parent, prefix } = siteSiblings(site);
  const head = `${prefix}writer-`;
  let names: string[] = [];
  try {
    names = readdirSync(parent);
  } catch {}
  return names.flatMap((name) => {
    const pid = name.startsWith(head) ? /^([1-9]\d{0,9})-[0-9a-f]{8}$/.exec(name.slice(head.length))?.[1] : undefined;
    return pid ? [{ path: join(parent, name), pid: Number(pid) }] : [];
  });
}

/**
 * Records this process as a writer of the site `dir`, before it logs anything; returns its
 * removal, for once it has stopped with nothing of its own left in the log (folded into the file).
 * A record that cannot be written (a read-only parent: no build swaps in there either) is not.
 */
export async function recordWriter(dir: string): Promise<() => Promise<void>> {
  const { parent, prefix } = siteSiblings(await resolveSiteDir(dir));
  const path = join(parent, `${prefix}writer-${process.pid}-${randomBytes(4).toString('hex')}`);
  // The site's parent made first (its first build would): a server of a new site is recorded all the same.
  await mkdir(parent, { recursive: true })
    .then(() => writeFile(path, `${process.pid}\n`, { flag: 'wx' }))
    .catch(() => undefined);
  return () => rm(path, { force: true });
}

/**
 * Whether a writable server may serve the site whose real directory is `site`: a record of a live
 * process (this one's included), or of a dead one (killed: what it logged may not be in a build
 * that read the dataset before it died). To be asked holding the dataset's lock, under which writers log.
 */
export function servedByWriter(site: string): boolean {
  return writersOf(site).length > 0;
}

/**
 * The records of writers of the site `dir` that are dead now, to be removed (the returned call)
 * once the dataset's log is folded into its file: then whatever they logged is in what is read.
 */
export async function deadWriters(dir: string): Promise<() => Promise<void>> {
  const site = await resolveSiteDir(dir).catch(() => null);
  const dead = site ? writersOf(site).filter(({ pid }) => pid !== process.pid && !isAlive(pid)) : [];
  return async () => void (await Promise.all(dead.map(({ path }) => rm(path, { force: true }).catch(() => undefined))));
}
