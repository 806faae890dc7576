import { lstatSync, writeFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { City } from '../core/fields.js';
import { LoggedCityWriter } from '../dataset/logged-writer.js';
import { syncDirectory } from '../fs/file-output.js';
import { fileSystemError, type PathRole } from '../fs/fs-error.js';
import { BEHIND_PATH } from '../site/behind.js';
import type { Served, SiteBuilder } from './site-builder.js';

/** A build's swap is two renames: waited for up to SWAP_TRIES × SWAP_WAIT_MS (1 s). */
const SWAP_TRIES = 200;
const SWAP_WAIT_MS = 5;
const MARKER_ROLE: PathRole = { what: "site's behind marker" };

export interface WritableOptions {
  readonly data: string;
  readonly dir: string;
  readonly builder: SiteBuilder;
  /** Puts created cities in what every server process answers. */
  readonly answer: (cities: readonly City[]) => Promise<void>;
  readonly lockWait: number;
  readonly log: (line: string) => void;
}

/**
 * serve --writable: the writer (logged-writer.ts) and the site's "behind" marker (BEHIND_PATH),
 * in place before a POST is acknowledged and removed only once the files hold every city
 * acknowledged, in turn with the POSTs. Opened before the first build: cities a killed server
 * logged are folded into the dataset file first.
 */
export async function openWritable(options: WritableOptions): Promise<{
  writer: LoggedCityWriter;
  /** What builds replace, guarded: the marker is in place while any build runs, and stays if the files are still behind after it. */
  guard: (served: Served) => Served;
  /** Once the first site is built: a marker a killed server left is removed. */
  started: () => Promise<void>;
}> {
  const marker = join(options.dir, BEHIND_PATH);
  const text = 'the files are behind the data: ask the live server\n';
  // Said with the marker's path and what to do: a full disk's ENOSPC (from write) carries no path;
  // an EACCES or EROFS names the marker, but was logged as Node's bare message.
  const named = (error: unknown) => fileSystemError(error, MARKER_ROLE, marker);
  // Before a build: the site directory may not be there yet.
  const mark = async () => {
    try {
      await mkdir(dirname(marker), { recursive: true });
      await writeFile(marker, text);
    } catch (error) {
      throw await named(error);
    }
  };
  // For a POST, while a build may be swapping its new tree in (two renames: for a moment there is no
  // site directory): waited for, never created here (the build's second rename would then fail).
  // Written only when absent: rewriting it (truncated, then written) costs ext4 a flush of its
  // blocks, 3 ms a POST batch. Synchronous: libuv's thread pool may be busy with the build's writes.
  const markBeside = async () => {
    for (let tries = 0; ; tries++) {
      try {
        if (!lstatSync(marker, { throwIfNoEntry: false })) writeFileSync(marker, text);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || tries === SWAP_TRIES) throw await named(error);
        await sleep(SWAP_WAIT_MS);
      }
    }
  };
  const clear = () => rm(marker, { force: true });
  // After a build, before POSTs count on fsync again: the site's directory synced, which commits
  // the build's metadata (ext4's journal) now. Else the next POST's log fsync pays for it: a fsync
  // right after writing 20,000 files took 30-440 ms, 1-7 ms once they were committed (bench:post
  // at 140k cities, quiet machine: p99 280 ms before, 65 ms after).
  const settle = () => syncDirectory(options.dir);
  const writer = await LoggedCityWriter.open(options.data, {
    mark: markBeside,
    apply: options.answer,
    publish: (file) => options.builder.publish(file),
    caughtUp: clear,
    lockWait: options.lockWait,
    log: options.log,
  });
  return {
    writer,
    guard: (served) => ({
      get settings() {
        return served.settings;
      },
      replace: async (build) => {
        await mark();
        try {
          await served.replace(build);
        } finally {
          await settle();
          await writer.whenCurrent(clear);
        }
      },
    }),
    started: async () => {
      await settle();
      await writer.whenCurrent(clear);
    },
  };
}
