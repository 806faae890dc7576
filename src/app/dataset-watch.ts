import { watch } from 'node:fs';
import { wordingOf } from '../core/errors.js';
import { realpath } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { LockBusyError } from '../fs/lock.js';
import { CityLog } from '../dataset/city-log.js';
import { checkLogged, DatasetMoved, withLogged } from '../dataset/log-fold.js';
import { LoggedIdTaken } from '../dataset/logged-in-file.js';
import { readFileOnly } from '../dataset/as-read.js';
import { siteSignature } from './behind-site.js';
import type { SiteBuilder } from './site-builder.js';
import { publishedAnyway } from '../store/sync-failure.js';

/** How long the dataset must stay quiet before a change is reported (editors write in steps). */
const SETTLE_MS = 150;

/**
 * Calls `changed` once the dataset file has changed and settled. A symlinked dataset changes when
 * its target is edited or when the link is pointed elsewhere: both directories are watched.
 * Returns the function that stops watching; `again(ms)` lets the caller ask for another look later.
 */
export async function watchDataset(
  file: string,
  changed: () => void,
  withLog = false,
): Promise<{ close: () => void; again: (ms: number) => void }> {
  const target = await realpath(file);
  // withLog: its write-ahead log too, which another process (a writable server) appends to and rewrites.
  const watched = new Set([resolve(file), target, ...(withLog ? [CityLog.of(target).path] : [])]);
  let timer: NodeJS.Timeout | undefined;
  const again = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(changed, ms);
  };
  const watchers = [...new Set([...watched].map(dirname))].map((dir) =>
    watch(dir, (_, name) => {
      if (name && watched.has(join(dir, name))) again(SETTLE_MS);
    }),
  );
  return {
    again,
    close: () => {
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}

/**
 * --watch: a changed dataset is built and served; one that fails is reported and the site kept.
 * `withLog` (a server that does not write the dataset): the dataset is the file plus what its
 * log holds (withLogged), built from a staged copy; else the file alone (a writable server's
 * logged cities are its catch-up's). Swapped in only while the dataset is as read (swapIfAsRead).
 * A logged city whose id the file holds as another record (LoggedIdTaken: the file edited) is a
 * bad save: said, not built, the site kept (built, the acknowledged city was gone from the answers).
 * `stop` aborted (the server closing): the rebuild under way is stopped as Ctrl-C stops a build (its
 * staging tree removed, the lock released, the site as it was), and said so.
 * Returns the task run at each change (it remembers whether the last change was used).
 */
export function rebuildOnChange(
  data: string,
  builder: SiteBuilder,
  describe: () => string,
  log: (line: string) => void,
  retry: (ms: number) => void,
  lockWait: number,
  stop: AbortSignal,
  withLog = false,
): () => Promise<void> {
  // The last change was not used: a change back to the dataset served says so (else that stayed the last word).
  let unused = false;
  return async () => {
    // The site, then the dataset, as they are before the build reads it: what its swap checks (behind-site.ts).
    const site = siteSignature(builder.dir);
    let source: Awaited<ReturnType<typeof withLogged>> | null = null;
    try {
      // Unreadable or invalid: the build from the file says why. A logged city's id taken: said, nothing built.
      source = withLog ? await withLogged(data).catch(unlessTaken) : null;
      const file = source?.path ?? data;
      const read = source?.read ?? (await readFileOnly(data).catch(() => null));
      if (!(await builder.changed(file))) {
        if (unused)
          log(`${data} changed: valid, and the same as the dataset served; serving it as before (${describe()})`);
        unused = false;
        return;
      }
      // The file alone (a writable server's): its log's cities checked against it all the same.
      if (!withLog) await checkLogged(data).catch(unlessTaken);
      const check = read ? { dataset: data, read, site, lockWait } : undefined;
      await builder.publish(file, check, stop);
      unused = false;
      log(`${data} changed: rebuilt, now ${describe()}`);
    } catch (error) {
      // A durable rebuild whose sync failed after its swap: the change is served, said with why it may not last.
      if (publishedAnyway(error)) {
        unused = false;
        return log(`${data} changed: ${wordingOf(error)}`);
      }
      unused = true;
      if (stop.aborted)
        return log(`${data} changed: stopped the rebuild as the server stopped; the site left as it was`);
      log(`${data} changed but was not used: ${wordingOf(error)}`);
      // Another build held the site: try again once it may be done. The dataset moved on: from it as it is now.
      if (error instanceof LockBusyError) retry(lockWait);
      else if (error instanceof DatasetMoved) retry(SETTLE_MS);
    } finally {
      await source?.discard();
    }
  };
}

/** null for a failure the build from the file says too (unreadable, invalid); a logged city's id taken thrown on (the build would not say it). */
function unlessTaken(error: unknown): null {
  if (error instanceof LoggedIdTaken) throw error;
  return null;
}

/**
 * `task` run one at a time: asked again while it runs, it runs once more after (a burst of changes, one rebuild).
 * `ended()`: asked no more, resolves once the run under way (if any) has ended (the server's close awaits it).
 */
export function coalesced(task: () => Promise<void>): { (): void; ended(): Promise<void> } {
  let running: Promise<void> | null = null;
  let again = false;
  let ended = false;
  const run = async () => {
    do {
      again = false;
      await task().catch(() => undefined);
    } while (again && !ended);
  };
  const ask = () => {
    if (ended) return;
    if (running) again = true;
    else running = run().finally(() => (running = null));
  };
  return Object.assign(ask, {
    ended: async () => {
      ended = true;
      await running;
    },
  });
}
