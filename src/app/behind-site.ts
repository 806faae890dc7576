import { rm } from 'node:fs/promises';
import { exists } from '../fs/file-output.js';
import { join } from 'node:path';
import { datasetState, foldLogged, ifUnchanged } from '../dataset/log-fold.js';
import { BEHIND_PATH } from '../site/behind.js';

/** How long a POST, a build or a fold waits for a lock another process holds (the dataset's, the site's), in ms. */
export const DEFAULT_LOCK_WAIT = 10_000;

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
  build: () => Promise<T>,
): Promise<T> {
  const { lockWait, log } = options;
  const name = options.dataName ?? data;
  await foldLogged(data, lockWait, log);
  const marker = join(dir, BEHIND_PATH);
  // Only a marker there before the build: one put there meanwhile is a writable server's, starting.
  const before = (await exists(marker)) ? await datasetState(data).catch(() => null) : null;
  const result = await build();
  if (before === null) return result;
  const kept = (why: string) => log(`warning: ${dir} stays marked behind its dataset (${BEHIND_PATH}): ${why}`);
  await ifUnchanged(data, before, lockWait, async () => {
    await rm(marker, { force: true });
    log(`${dir}: its files hold every city of ${name}: no longer marked behind (${BEHIND_PATH} removed)`);
  }).then(
    (removed) =>
      removed || kept(`${name} changed while the site was built (a writable server adding cities?): build again`),
    (error: Error) => kept(error.message),
  );
  return result;
}

/** What a server of `dir` without a dataset says at start when the site is marked behind (it cannot build), else null. */
export async function behindWarning(dir: string): Promise<string | null> {
  if (!(await exists(join(dir, BEHIND_PATH)))) return null;
  return (
    `warning: ${dir} is marked behind its dataset (${BEHIND_PATH}: a writable server stopped before its files held every city it created): ` +
    `answers lack the cities created since its last build, and nginx sends every request here; to catch up, ` +
    `run cities-api build --data FILE --site ${dir}, or serve it with --data FILE (and --writable)`
  );
}
