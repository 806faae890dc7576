import { lstatSync, writeFileSync } from 'node:fs';
import { realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { City } from '../core/fields.js';
import { CityLog } from '../dataset/city-log.js';
import { datasetSignature } from '../dataset/known-ids.js';
import { LoggedCityWriter } from '../dataset/logged-writer.js';
import { exists, syncDirectory } from '../fs/file-output.js';
import { fileSystemError, type PathRole } from '../fs/fs-error.js';
import { underDatasetLock } from '../fs/lock.js';
import { BEHIND_PATH, BEHIND_TEXT } from '../site/behind.js';
import { publishedAnyway } from '../store/sync-failure.js';
import { wordingOf } from '../core/errors.js';
import { siteSignature } from './behind-site.js';
import type { Served, SiteBuilder } from './site-builder.js';
import { recordWriter } from './site-writers.js';

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
 * in place before a POST is logged, under the dataset's lock. Each build swaps in marked or not
 * as its files hold every city of the dataset or not, under the same lock (behind-site.ts); a
 * marker a batch put there and then logged nothing into is taken back, when nothing has changed
 * since (the site, the dataset file and its log): the files hold every city again. Opened before
 * the first build: cities a killed server logged are folded into the dataset file first.
 */
export async function openWritable(options: WritableOptions): Promise<{
  writer: LoggedCityWriter;
  /** Stops the writer (its log folded into the dataset file, else kept and said), then its record as the site's writer (if folded). */
  close: () => Promise<void>;
  /** What builds replace, guarded: the site's directory synced after each. */
  guard: (served: Served) => Served;
  /** Once the first site is built (its marker kept or removed as build does: buildCurrent). */
  started: () => Promise<void>;
}> {
  const marker = join(options.dir, BEHIND_PATH);
  const target = await realpath(options.data);
  const log = CityLog.of(target);
  // Said with the marker's path and what to do: a full disk's ENOSPC (from write) carries no path;
  // an EACCES or EROFS names the marker, but was logged as Node's bare message.
  const named = (error: unknown) => fileSystemError(error, MARKER_ROLE, marker);
  // The site, the dataset file and its log, as they were when a batch found the site unmarked
  // (its files then held every city of the dataset) and marked it.
  let unmarkedAt: string | null = null;
  const now = async () => `${siteSignature(options.dir)} ${await datasetSignature(target)} ${await log.signature()}`;
  // For a POST, under the dataset's lock: every build's swap takes that lock too (never in the
  // middle of its two renames), but one of another process's of the site, unchecked (an older
  // cities-api), may be: waited for, never created here (its second rename would then fail).
  // Written only when absent: rewriting it (truncated, then written) costs ext4 a flush of its
  // blocks, 3 ms a POST batch. Synchronous: libuv's thread pool may be busy with the build's writes.
  const markBeside = async () => {
    for (let tries = 0; ; tries++) {
      try {
        if (lstatSync(marker, { throwIfNoEntry: false })) return;
        const at = await now();
        writeFileSync(marker, BEHIND_TEXT);
        unmarkedAt = at;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || tries === SWAP_TRIES) throw await named(error);
        await sleep(SWAP_WAIT_MS);
      }
    }
  };
  // Told once a batch was refused, or a catch-up ended, with nothing of this writer's left unbuilt:
  // the marker is taken back only if nothing changed since a batch put it there (its batch then
  // logged nothing). Anything else is left to the next build's swap, which knows what its files hold.
  const caughtUp = async () => {
    if (unmarkedAt === null || !(await exists(marker))) return;
    await underDatasetLock(target, options.lockWait, async () => {
      if ((await now()) === unmarkedAt) await rm(marker, { force: true });
    });
  };
  // After a build, before POSTs count on fsync again: the site's directory synced, which commits
  // the build's metadata (ext4's journal) now. Else the next POST's log fsync pays for it: a fsync
  // right after writing 20,000 files took 30-440 ms, 1-7 ms once they were committed (bench:post
  // at 140k cities, quiet machine: p99 280 ms before, 65 ms after).
  const settle = () => syncDirectory(options.dir);
  // The site as last seen after this writer's build settled: a catch-up reads the dataset after
  // it, so a site otherwise at its swap is another builder's, swapped in since (swapIfAsRead).
  let seen: string | null = null;
  // Before anything is logged: a build of the site swapping in meanwhile keeps it marked behind what this writer logs.
  const unrecord = await recordWriter(options.dir);
  const writer = await LoggedCityWriter.open(options.data, {
    mark: markBeside,
    apply: options.answer,
    publish: async (file, read, stop) => {
      try {
        const check = { dataset: options.data, read, site: seen, lockWait: options.lockWait };
        await options.builder.publish(file, check, stop).catch((error: unknown) => {
          // Its sync failed after its swap: the site holds the cities and is answered, so they are
          // folded into the dataset file as after any catch-up (the next durable build writes it whole).
          if (!publishedAnyway(error)) throw error;
          options.log(`error: catch-up of the cities created: ${wordingOf(error)}`);
        });
      } finally {
        seen = siteSignature(options.dir);
      }
    },
    caughtUp,
    lockWait: options.lockWait,
    log: options.log,
  }).catch(async (error: unknown) => {
    await unrecord();
    throw error;
  });
  return {
    writer,
    // The record kept where what it logged is not folded into the file (refused: close rejects; or the
    // dataset's lock busy): whoever folds it in next (a build) then forgets this record.
    close: async () => {
      if (await writer.close()) await unrecord();
    },
    guard: (served) => ({
      get settings() {
        return served.settings;
      },
      replace: async (build) => {
        try {
          await served.replace(build);
        } finally {
          await settle();
        }
      },
    }),
    started: async () => {
      await settle();
      seen = siteSignature(options.dir);
    },
  };
}
