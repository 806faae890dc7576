import { watch } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { LockBusyError } from '../fs/lock.js';
import type { SiteBuilder } from './site-builder.js';

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
): Promise<{ close: () => void; again: (ms: number) => void }> {
  const watched = new Set([resolve(file), await realpath(file)]);
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

/** --watch: a changed dataset is built and served; one that fails is reported and the site kept. */
export async function rebuildOnChange(
  data: string,
  builder: SiteBuilder,
  describe: () => string,
  log: (line: string) => void,
  retry: (ms: number) => void,
  lockWait: number,
): Promise<void> {
  if (!(await builder.changed(data))) return;
  await builder.publish(data).then(
    () => log(`${data} changed: rebuilt, now ${describe()}`),
    (error) => {
      log(`${data} changed but was not used: ${(error as Error).message}`);
      // Another build held the site: try again once it may be done.
      if (error instanceof LockBusyError) retry(lockWait);
    },
  );
}
