import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { exists } from '../fs/file-output.js';
import { dirname, join } from 'node:path';
import { CitiesApiError, optionNamed, wordingOf } from '../core/errors.js';
import { type DatasetRead, readFileOnly, sinceRead, underLock } from '../dataset/as-read.js';
import { DatasetMoved, foldLogged } from '../dataset/log-fold.js';
import { BEHIND_PATH } from '../site/behind.js';
import { LockBusyError, lockSite, type Release, siteSiblings, whileBusy } from '../fs/lock.js';
import { resolveSiteDir } from '../store/site-path.js';
import type { SwapCheck, SwapOutcome } from './build-options.js';
import { deadWriters, servedByWriter } from './site-writers.js';

/** What buildCurrent is told: how long to wait for a lock, where to say what it did, and the dataset's name in messages. */
interface Around {
  readonly lockWait: number;
  readonly log: (line: string) => void;
  readonly dataName?: string | undefined;
  /** Ctrl-C: ends the wait for another build's lock (serve's first build, build). */
  readonly signal?: AbortSignal | undefined;
}

/** What a build stopped while it waited for another's lock says (exit 130 from the CLI). */
export const interruptedWaiting = (dir: string) =>
  new CitiesApiError(`interrupted: the site ${dir} was left as it was (nothing was written)`);

/**
 * A site a writable server left marked behind its dataset (BEHIND_PATH: killed, or stopped, before
 * its files held every city it acknowledged; nginx then sends every request to the live server), as
 * every other command meets it. A build from the dataset (build, serve --data's first build, a
 * writable server's too, whose writer has folded its log at open) reads the file plus its
 * write-ahead log: the log is folded into the file first; its swap is checked and decides the
 * marker (swapIfAsRead); a build with nothing to write removes it where a swap would have.
 * A server without a dataset cannot build: it says so (behindWarning).
 *
 * The site's lock is held from before the fold until the swap (`build` is told it holds it): no
 * other build of the site is swapped in between. Cities writable servers take meanwhile (this
 * site's or another's, on the same dataset) only grow the dataset past what the build read, in its
 * log or folded into its file by a recorded fold (fold-journal.ts): the build is swapped in, never
 * refused for them; marked behind them only where a writable server serves this site (its
 * catch-up builds them in, nginx asking it meanwhile), else said. A dataset otherwise changed
 * meanwhile (edited, replaced) refuses the swap: built again from it as it is now, MOVED_TRIES times at most.
 */
export async function buildCurrent<T extends { readonly sinceRead?: SwapOutcome | undefined }>(
  data: string,
  dir: string,
  options: Around,
  build: (swapCheck: SwapCheck | undefined, siteLocked: boolean) => Promise<T>,
): Promise<T> {
  const { lockWait, log } = options;
  const name = options.dataName ?? data;
  let result: T;
  let read: DatasetRead | null;
  let markedBefore: boolean;
  for (let tries = 1; ; tries++) {
    const release = await lockSiteFirst(dir, lockWait, options.signal);
    try {
      // Writers of the site that died: what they logged is folded in now, and read; their records go.
      const forget = await deadWriters(dir);
      await foldLogged(data, lockWait, log);
      await forget();
      // A marker there before the build (not one put meanwhile: a writable server's, starting) is removed once built.
      markedBefore = await exists(join(dir, BEHIND_PATH));
      // Taken before the build reads the dataset: its files are swapped in only if it is still so (swapIfAsRead).
      read = await readFileOnly(data).catch(() => null);
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
  if (read === null) return result;
  const swapped = result.sinceRead;
  if (!swapped) {
    if (markedBefore) await unmarkUpToDate(data, dir, read, options);
    return result;
  }
  if (markedBefore && !swapped.marked) log(unmarked(dir, name));
  if (swapped.cities) log(loggedSince(dir, name, swapped));
  return result;
}

/** What a build swapped in with cities logged since it read the dataset says. */
function loggedSince(dir: string, name: string, { cities, marked }: SwapOutcome): string {
  const some = cities === 1 ? '1 city' : `${cities} cities`;
  return marked
    ? `warning: ${dir} stays marked behind its dataset (${BEHIND_PATH}): ${changed(name)}: ${some} logged since it was read`
    : `${dir}: ${some} logged into ${name} since it was read (by a writable server of another site) are not in its files: build again to include them (no writable server serves ${dir}: not marked behind)`;
}

/**
 * A site marked behind before a build that found its files up to date with the dataset it read
 * (nothing written, nothing swapped in): the marker removed under the dataset's lock where a swap
 * would not have put it. One put meanwhile (a writable server's, starting) is its writer's.
 */
async function unmarkUpToDate(data: string, dir: string, read: DatasetRead, around: Around): Promise<void> {
  const { lockWait, log, dataName = data } = around;
  const marker = join(dir, BEHIND_PATH);
  const kept = (why: string) => log(`warning: ${dir} stays marked behind its dataset (${BEHIND_PATH}): ${why}`);
  const site = await resolveSiteDir(dir).catch(() => dir);
  const outcome = await underLock(data, lockWait, async () => {
    const { since, cities } = await sinceRead(data, read);
    const unmark = since === 'current' || (since === 'grown' && !servedByWriter(site));
    if (unmark) await rm(marker, { force: true });
    return { cities, unmark };
  }).catch((error: unknown) => void kept(wordingOf(error)));
  if (!outcome) return;
  if (!outcome.unmark) return kept(changed(dataName));
  log(unmarked(dir, dataName));
  if (outcome.cities) log(loggedSince(dir, dataName, { cities: outcome.cities, marked: false }));
}

/** What a build that unmarked its site says. */
const unmarked = (dir: string, name: string) =>
  `${dir}: its files hold every city of ${name} it was built from: no longer marked behind (${BEHIND_PATH} removed)`;

/** Why a site stays marked behind: cities logged (or the file changed) since its build read the dataset. */
const changed = (name: string) =>
  `${name} changed while the site was built (a writable server adding cities? its catch-up builds them in, nginx asking it meanwhile; if none runs, build again)`;

/**
 * The site's lock, taken (waited for up to `wait` ms, looking again every few ms: a writable server
 * taking POSTs without pause builds one catch-up after another, and leaves it free only between
 * them) before the dataset is read; null where it cannot be taken but for another build holding it
 * (no parent directory yet, a path the build says it cannot use): the build then takes it itself.
 */
async function lockSiteFirst(dir: string, wait: number, signal?: AbortSignal): Promise<Release | null> {
  const site = await resolveSiteDir(dir).catch(() => null);
  if (site === null || !(await exists(dirname(site)))) return null;
  return whileBusy(() => lockSite(site), wait, siteSiblings(site).lock, 5, signal).catch((error: unknown) => {
    if (signal?.aborted) throw interruptedWaiting(dir);
    if (error instanceof LockBusyError) throw error;
    return null;
  });
}

/** How many builds buildCurrent starts while the dataset changes under each before its swap. */
const MOVED_TRIES = 3;

/**
 * A build's swap (site-writer.ts's atSwap) into the site `dir`, every build's (build, serve's
 * first, --watch, a writable server's catch-up), run under the dataset's lock, under which a
 * writable server logs and folds its cities, only if the dataset is still what the build read or
 * grew from it (as-read.ts), the site then marked behind or not:
 * - `current`: swapped in, not marked;
 * - `grown` (cities logged since, past what it holds), if no other build was swapped in since it
 *   read (check.site; that one may hold them): swapped in; marked behind them where a writable
 *   server serves the site (site-writers.ts: it may have acknowledged them; its catch-up builds
 *   them in, nginx asking it meanwhile), else not (its clients were promised none of them: the
 *   files are a snapshot of the dataset, as every build's are);
 * - else DatasetMoved, nothing swapped in.
 * Whatever build of the site finishes last, its files are then never older than a city its own
 * server acknowledged without the marker, nor older than the files they replace: the marker is
 * removed only where the files hold every such city, here or by a check as strict (writable.ts).
 */
export async function swapIfAsRead(
  check: SwapCheck,
  dir: string,
  swap: (behind: boolean) => Promise<void>,
): Promise<SwapOutcome> {
  const swapped = await underLock(check.dataset, check.lockWait, async () => {
    const { since, cities } = await sinceRead(check.dataset, check.read);
    if (since === 'moved' || (since === 'grown' && siteSignature(dir) !== check.site)) return null;
    const marked = since === 'grown' && servedByWriter(dir);
    await swap(marked);
    return { cities, marked };
  });
  if (!swapped) throw new DatasetMoved(check.dataset);
  return swapped;
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
