import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { exists } from '../fs/file-output.js';
import { dirname, join } from 'node:path';
import { CitiesApiError, optionNamed, wordingOf } from '../core/errors.js';
import { readFileOnly, sinceRead, underLock } from '../dataset/as-read.js';
import { DatasetMoved, datasetState, foldLogged, ifUnchanged } from '../dataset/log-fold.js';
import { BEHIND_PATH } from '../site/behind.js';
import { LockBusyError, lockSite, type Release, siteSiblings, whileBusy } from '../fs/lock.js';
import { resolveSiteDir } from '../store/site-path.js';
import type { SwapCheck } from './build-options.js';

/**
 * A site a writable server left marked behind its dataset (BEHIND_PATH: killed, or stopped, before
 * its files held every city it acknowledged; nginx then sends every request to the live server), as
 * every other command meets it. A build from the dataset (build, serve --data's first build, a
 * writable server's too, whose writer has folded its log at open) reads the file plus its
 * write-ahead log: the log is folded into the file first; its swap is checked (swapIfAsRead); once
 * built, the marker is removed if the site's files hold every city of the dataset (nothing logged
 * or changed meanwhile). A server without a dataset cannot build: it says so (behindWarning).
 *
 * The site's lock is held from before the fold until the swap (`build` is told it holds it): no
 * other build of the site is swapped in between, nor can a writable server of the site fold its
 * cities into the file (its fold follows its build's swap). So cities a writable server takes
 * meanwhile only grow its log past what the build read: the build is swapped in marked behind
 * them (its catch-up builds them in after it, nginx asking it meanwhile), never refused for them.
 * A dataset otherwise changed meanwhile (edited, replaced, folded into by another site's server)
 * refuses the swap: built again from it as it is now, MOVED_TRIES times at most.
 */
export async function buildCurrent<T>(
  data: string,
  dir: string,
  options: { readonly lockWait: number; readonly log: (line: string) => void; readonly dataName?: string | undefined },
  build: (swapCheck: SwapCheck | undefined, siteLocked: boolean) => Promise<T>,
): Promise<T> {
  const { lockWait, log } = options;
  const name = options.dataName ?? data;
  const marker = join(dir, BEHIND_PATH);
  let result: T;
  let markedBefore: boolean;
  let before: string | null;
  for (let tries = 1; ; tries++) {
    const release = await lockSiteFirst(dir, lockWait);
    try {
      await foldLogged(data, lockWait, log);
      // A marker there before the build (not one put meanwhile: a writable server's, starting) is removed once built.
      markedBefore = await exists(marker);
      before = await datasetState(data).catch(() => null);
      // Taken before the build reads the dataset: its files are swapped in only if it is still so (swapIfAsRead).
      const read = await readFileOnly(data).catch(() => null);
      const site = release ? siteSignature(dir) : null;
      result = await build(read === null ? undefined : { dataset: data, read, site, lockWait }, release !== null);
      break;
    } catch (error) {
      if (!(error instanceof DatasetMoved)) throw error;
      if (tries === MOVED_TRIES)
        throw new CitiesApiError(
          `${name} kept changing while ${dir} was built from it (${tries} times: edited, or replaced?): ` +
            `the site was left as it was; build again once it is quiet`,
        );
      log(`${name} changed while ${dir} was built from it: building again from the dataset as it is now`);
    } finally {
      await release?.();
    }
  }
  if (before === null) return result;
  const kept = (why: string) => log(`warning: ${dir} stays marked behind its dataset (${BEHIND_PATH}): ${why}`);
  const changed = `${name} changed while the site was built (a writable server adding cities? its catch-up builds them in, nginx asking it meanwhile; if none runs, build again)`;
  // No marker before: one there now is this build's (its swap marked it: cities logged meanwhile), said, or a starting server's.
  if (!markedBefore) {
    const same = await ifUnchanged(data, before, lockWait, async () => {}).catch(() => true);
    if (!same && (await exists(marker))) kept(changed);
    return result;
  }
  await ifUnchanged(data, before, lockWait, async () => {
    await rm(marker, { force: true });
    log(`${dir}: its files hold every city of ${name}: no longer marked behind (${BEHIND_PATH} removed)`);
  }).then(
    (removed) => removed || kept(changed),
    (error: unknown) => kept(wordingOf(error)),
  );
  return result;
}

/**
 * The site's lock, taken (waited for up to `wait` ms, looking again every few ms: a writable server
 * taking POSTs without pause builds one catch-up after another, and leaves it free only between
 * them) before the dataset is read; null where it cannot be taken but for another build holding it
 * (no parent directory yet, a path the build says it cannot use): the build then takes it itself.
 */
async function lockSiteFirst(dir: string, wait: number): Promise<Release | null> {
  const site = await resolveSiteDir(dir).catch(() => null);
  if (site === null || !(await exists(dirname(site)))) return null;
  return whileBusy(() => lockSite(site), wait, siteSiblings(site).lock, 5).catch((error: unknown) => {
    if (error instanceof LockBusyError) throw error;
    return null;
  });
}

/** How many builds buildCurrent starts while the dataset changes under each before its swap. */
const MOVED_TRIES = 3;

/**
 * A build's swap (site-writer.ts's atSwap) into the site `dir`, every build's (build, serve's
 * first, --watch, a writable server's catch-up), run under the dataset's lock, under which a
 * writable server logs and folds its cities, only if the dataset is still what the build read
 * (as-read.ts), the site then marked behind or not as its files hold every city of it or not:
 * - `current`: swapped in, not marked;
 * - `grown` (cities logged since, past what it holds), if no other build was swapped in since it
 *   read (check.site; that one may hold them): swapped in marked; the writable server that logged
 *   them builds them in (its catch-up), nginx asking it meanwhile;
 * - else DatasetMoved, nothing swapped in.
 * Whatever build of the site finishes last, its files are then never older than the dataset
 * without the marker, nor older than the files they replace: the marker is removed only where
 * the files hold every city of the dataset, here or by a check as strict (ifUnchanged, writable.ts).
 */
export async function swapIfAsRead(
  check: SwapCheck,
  dir: string,
  swap: (behind: boolean) => Promise<void>,
): Promise<void> {
  const swapped = await underLock(check.dataset, check.lockWait, async () => {
    const since = await sinceRead(check.dataset, check.read);
    if (since === 'moved' || (since === 'grown' && siteSignature(dir) !== check.site)) return false;
    await swap(since === 'grown');
    return true;
  });
  if (!swapped) throw new DatasetMoved(check.dataset);
}

/**
 * What tells one build of the site `dir` from another: its directory, which each swap renames in
 * anew (ino and birth time), 'none' while there is none. Synchronous: taken under the dataset's
 * lock, which POSTs wait for, while libuv's thread pool may be busy with a build's writes.
 */
export function siteSignature(dir: string): string {
  const stats = statSync(dir, { throwIfNoEntry: false });
  return stats ? `${stats.ino}:${stats.birthtimeMs}` : 'none';
}

/** What a server of `dir` without a dataset says at start when the site is marked behind (it cannot build), else null. */
export async function behindWarning(dir: string): Promise<string | null> {
  if (!(await exists(join(dir, BEHIND_PATH)))) return null;
  return (
    `warning: ${dir} is marked behind its dataset (${BEHIND_PATH}: a writable server stopped before its files held every city it created): ` +
    `answers lack the cities created since its last build, and nginx sends every request here; to catch up, ` +
    `build it again from its dataset (cities-api build), or serve it with ${optionNamed('data')} (and ${optionNamed('writable')})`
  );
}
