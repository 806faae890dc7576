import { constants } from 'node:fs';
import { chmod, copyFile, type FileHandle, lstat, open, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { draftName, newDraft, removeDeadDrafts } from '../fs/dead-drafts.js';
import { fileSystemError } from '../fs/fs-error.js';
import type { Appended } from './appended-text.js';
import { DATASET_ROLE } from './sample.js';

// The temporary file a dataset's new version is written to beside it (append-cities.ts stages it
// there before it replaces the file), and those that killed writers left there, removed. Each is a
// draft of its writer's (dead-drafts.ts: `.NAME.tmp-PID.TOKEN.EXT`), in use until it is committed
// or discarded: two writers of one dataset in one process (two servers on it, a server and a
// build's fold or serve --watch's copy, two threads) each stage their own.

/** A draft beside the dataset's real file `target`, `.NAME.KIND-PID.TOKEN` + `tail`. */
export function datasetDraft(target: string, kind: 'tmp' | 'bak', tail = ''): { path: string; done: () => void } {
  return newDraft(draftName(join(dirname(target), `.${basename(target)}.${kind}-`), tail));
}

/**
 * The new text in a file created beside `target` (never through a link: O_EXCL), with its mode and
 * owner, fsynced: `content`'s bytes after the first `keep` of what the file holds (empty, or a copy
 * of `target` when `copied`). Its path, in use until `done()` (once it is renamed or removed).
 */
export async function writeTemp(
  target: string,
  extension: string,
  copied: boolean,
  content: (handle: FileHandle) => Promise<Appended>,
): Promise<{ path: string; done: () => void }> {
  await removeDeadTemps(target);
  const { mode, uid, gid } = await lstat(target);
  const draft = datasetDraft(target, 'tmp', extension);
  const temp = draft.path;
  const failed = async (error: unknown) => {
    await rm(temp, { force: true });
    draft.done();
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
    : await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode & 0o7777).catch(
        (error: unknown) => {
          draft.done();
          throw error;
        },
      );
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
  return draft;
}

/**
 * The temporary files, backups on their way to FILE.bak and lock drafts (lock-file.ts:
 * `.NAME.lock-PID.THREAD`) left beside the dataset by writers that were killed; older versions
 * named them with the pid alone (`.NAME.tmp-PID.EXT`, `.NAME.bak-PID`). Any one extension: a
 * dataset's temp has its path's, and a link may name the file with another.
 */
async function removeDeadTemps(target: string): Promise<void> {
  const before = (kind: string) => join(dirname(target), `.${basename(target)}.${kind}-`);
  await removeDeadDrafts(['tmp', 'bak', 'lock'].map((kind) => draftName(before(kind), '', true)));
}
