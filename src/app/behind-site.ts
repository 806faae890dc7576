import { rm } from 'node:fs/promises';
import { exists } from '../fs/file-output.js';
import { join } from 'node:path';
import { CitiesApiError, optionNamed, wordingOf } from '../core/errors.js';
import { DatasetMoved, datasetState, foldLogged, ifAsRead, ifUnchanged, readState } from '../dataset/log-fold.js';
import { BEHIND_PATH } from '../site/behind.js';
import type { SwapCheck } from './build-options.js';

/**
 * A site a writable server left marked behind its dataset (BEHIND_PATH: killed, or stopped, before
 * its files held every city it acknowledged; nginx then sends every request to the live server), as
 * every other command meets it. A build from the dataset (build, serve --data without --writable,
 * whose writer does the same its own way) reads the file plus its write-ahead log: the log is
 * folded into the file first; once built, the marker is removed if the site's files hold every city
 * of the dataset (nothing logged or changed meanwhile). A server without a dataset cannot build: it
 * says so (behindWarning).
 */
export async function buildCurrent<T>(
  data: string,
  dir: string,
  options: { readonly lockWait: number; readonly log: (line: string) => void; readonly dataName?: string | undefined },
  build: (swapCheck: SwapCheck | undefined) => Promise<T>,
): Promise<T> {
  const { lockWait, log } = options;
  const name = options.dataName ?? data;
  const marker = join(dir, BEHIND_PATH);
  let result: T;
  let before: string | null;
  for (let tries = 1; ; tries++) {
    await foldLogged(data, lockWait, log);
    // Only a marker there before the build: one put there meanwhile is a writable server's, starting.
    before = (await exists(marker)) ? await datasetState(data).catch(() => null) : null;
    // Taken before the build reads the dataset: its files are swapped in only if it is still so (swapIfAsRead).
    const state = await readState(data).catch(() => null);
    try {
      result = await build(state === null ? undefined : { dataset: data, state, lockWait });
    } catch (error) {
      if (!(error instanceof DatasetMoved)) throw error;
      if (tries === MOVED_TRIES)
        throw new CitiesApiError(
          `${name} kept changing while ${dir} was built from it (${tries} times: a writable server adding cities?): ` +
            `the site was left as it was; build again once it is quiet`,
        );
      log(`${name} changed while ${dir} was built from it: building again from the dataset as it is now`);
      continue;
    }
    if (before === null) return result;
    break;
  }
  const kept = (why: string) => log(`warning: ${dir} stays marked behind its dataset (${BEHIND_PATH}): ${why}`);
  await ifUnchanged(data, before, lockWait, async () => {
    await rm(marker, { force: true });
    log(`${dir}: its files hold every city of ${name}: no longer marked behind (${BEHIND_PATH} removed)`);
  }).then(
    (removed) =>
      removed || kept(`${name} changed while the site was built (a writable server adding cities?): build again`),
    (error: unknown) => kept(wordingOf(error)),
  );
  return result;
}

/** How many builds buildCurrent starts while the dataset changes under each before its swap. */
const MOVED_TRIES = 3;

/**
 * A build's swap (site-writer.ts's atSwap), run under the dataset's lock only if the dataset, its
 * file and its log, is still what the build read: else DatasetMoved, nothing swapped in. Whatever
 * build of the site finishes last, its files are then never older than the dataset: one from an
 * older snapshot (a `build` started before a writable server's catch-up folded cities in) is
 * refused, where it would have replaced the newer files with the marker already gone.
 */
export async function swapIfAsRead(check: SwapCheck, swap: () => Promise<void>): Promise<void> {
  if (!(await ifAsRead(check.dataset, check.state, check.lockWait, swap))) throw new DatasetMoved(check.dataset);
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
