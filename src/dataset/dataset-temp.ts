import { constants } from 'node:fs';
import { chmod, copyFile, type FileHandle, lstat, open, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileSystemError } from '../fs/fs-error.js';
import { isAlive } from '../fs/lock-holder.js';
import type { Appended } from './appended-text.js';
import { DATASET_ROLE } from './sample.js';

// The temporary file a dataset's new version is written to beside it (append-cities.ts stages it
// there before it replaces the file), and those that killed writers left there, removed.

/**
 * The new text in a file created beside `target` (never through a link: O_EXCL), with its mode and
 * owner, fsynced: `content`'s bytes after the first `keep` of what the file holds (empty, or a copy
 * of `target` when `copied`).
 */
export async function writeTemp(
  target: string,
  extension: string,
  copied: boolean,
  content: (handle: FileHandle) => Promise<Appended>,
): Promise<string> {
  const dir = dirname(target);
  const name = basename(target);
  await removeDeadTemps(dir, name);
  const temp = join(dir, `.${name}.tmp-${process.pid}${extension}`);
  await rm(temp, { force: true });
  const { mode, uid, gid } = await lstat(target);
  const failed = async (error: unknown) => {
    await rm(temp, { force: true });
    // A full disk's ENOSPC (from write or fsync) carries no path: said with the dataset's.
    return fileSystemError(error, DATASET_ROLE, target);
  };
  const handle = copied
    ? // COPYFILE_EXCL creates it as O_EXCL does; copied in libuv's thread pool. The copy has the file's
      // mode: a read-only file's (0444) is made writable for its owner until the chmod below.
      await copyFile(target, temp, constants.COPYFILE_EXCL)
        .then(() => chmod(temp, (mode & 0o7777) | 0o600))
        .then(() => open(temp, constants.O_RDWR | constants.O_NOFOLLOW))
        .catch(async (error: unknown) => {
          throw await failed(error);
        })
    : await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode & 0o7777);
  try {
    const { keep, pieces } = await content(handle);
    if (copied) await handle.truncate(keep);
    let at = keep;
    for (const piece of pieces)
      for (let done = 0; done < piece.length; ) {
        const { bytesWritten } = await handle.write(piece, done, piece.length - done, at);
        done += bytesWritten;
        at += bytesWritten;
      }
    await handle.chmod(mode & 0o7777);
    await handle.chown(uid, gid).catch(() => undefined); // only root may give a file away
    await handle.sync();
  } catch (error) {
    await handle.close();
    throw await failed(error);
  }
  await handle.close();
  return temp;
}

/** Temporary files and lock drafts left beside the dataset by writers that were killed. */
async function removeDeadTemps(dir: string, name: string): Promise<void> {
  for (const entry of await readdir(dir)) {
    const match = entry.startsWith(`.${name}.`) ? /\.(?:tmp|bak|lock)-(\d+)(?:\.[^.]*)?$/.exec(entry) : null;
    if (!match || Number(match[1]) === process.pid || isAlive(Number(match[1]))) continue;
    const stats = await lstat(join(dir, entry)).catch(() => null);
    if (stats && !stats.isDirectory()) await rm(join(dir, entry), { force: true });
  }
}
