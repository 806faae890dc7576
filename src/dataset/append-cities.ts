import { fileSystemError } from '../fs/fs-error.js';
import { DATASET_ROLE } from './sample.js';
import { constants, type Stats } from 'node:fs';
import { access, copyFile, type FileHandle, link, lstat, realpath, rename, rm, stat } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { appendTo, checkStorable, type DatasetBytes } from './appended-text.js';
import { datasetSignature, signatureOf } from './known-ids.js';
import { datasetDraft, writeTemp } from './dataset-temp.js';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import type { City } from '../core/fields.js';
import { syncDirectory } from '../fs/file-output.js';
import { DATASET_SIDE_ROLE } from '../fs/lock.js';

/**
 * A dataset file changed in two steps, so that nothing is replaced before the new data is known
 * to be good: `stageAppend` writes the new dataset, complete and fsynced, to a temporary file
 * beside the real one (a symlinked path is resolved: the link's target is what changes); the
 * caller checks it (builds the site from it), then `commitStaged` renames it over the file, the
 * old one first kept as FILE.bak (itself replaced by a rename), or `discardStaged` drops it.
 */
export interface StagedDataset {
  /** The real file: the dataset path with every symlink resolved. */
  readonly target: string;
  /** The new dataset, beside the target, named with the dataset's extension so it reads as one: its writer's own (dataset-temp.ts). */
  readonly temp: string;
  /** Says the temp is no longer in use (no other writer removes it until then): commitStaged and discardStaged call it. */
  readonly done: () => void;
  /** The file it replaces as it was staged from (datasetSignature: inode, size, times): the commit refuses unless it still is. */
  readonly signature: string;
}

/** Appends cities in one step (stage, then commit). */
export async function appendCities(file: string, cities: readonly City[]): Promise<void> {
  await commitStaged(await stageAppend(file, cities));
}

/**
 * Writes the dataset `file` plus `cities` to a temporary file beside its real file: the file
 * copied to it (in libuv's thread pool), then the cities written in, only what that needs of it
 * read (its end, or a chunk at a time): this thread never holds it whole (70 MB at 140,000
 * cities). `signature`: the file as the caller read it (which ids it holds); by default, as it
 * is before the copy.
 */
export async function stageAppend(file: string, cities: readonly City[], signature?: string): Promise<StagedDataset> {
  const target = await realpath(file);
  const json = extname(file).toLowerCase() === '.json';
  await checkStorable(cities, json);
  // Taken before the copy: a change made while it is copied changes it too.
  const copied = signature ?? (await datasetSignature(target));
  const temp = await writeTemp(target, extname(file), true, async (copy) =>
    appendTo(fileBytes(copy, (await copy.stat()).size), cities, json),
  );
  return { target, temp: temp.path, done: temp.done, signature: copied };
}

/**
 * Replaces the file with the staged dataset, keeping the old one as FILE.bak. Throws, changing
 * nothing, if the file changed meanwhile. Returns the new file's signature (datasetSignature) once
 * in place, or '' if it is no longer the file staged (changed by someone else since the rename):
 * what its caller knows of it must then be read again.
 */
export async function commitStaged(staged: StagedDataset): Promise<string> {
  const { target, temp, signature } = staged;
  const dir = dirname(target);
  // Named for its writer too: a commit holds the dataset's lock, but appendCities takes none.
  const { path: backup, done } = datasetDraft(target, 'bak');
  let made: Stats;
  try {
    // Its inode, size and times, not its bytes: nothing of it read here.
    if ((await datasetSignature(target)) !== signature) throw new DatasetChanged(target);
    // A rename keeps the staged file's inode, size and mtime (not its ctime: the signature is taken once it is in place).
    made = await stat(temp);
    await link(target, backup).catch(() => copyFile(target, backup, constants.COPYFILE_EXCL));
    // rename() replaces a `.bak` that is a symlink itself, never the file it points to.
    await rename(backup, `${target}.bak`);
    await rename(temp, target);
  } catch (error) {
    await rm(backup, { force: true });
    await discardStaged(staged);
    // Said as the dataset's (a build's caller names its site): its backup, `.bak` or the staged file in the way...
    throw await fileSystemError(error, DATASET_SIDE_ROLE, target);
  } finally {
    done();
  }
  staged.done();
  // The new file is in place: syncing its directory only makes the rename durable sooner, and
  // some filesystems refuse to; a failure here must not report the commit as failed.
  await syncDirectory(dir);
  const now = await stat(target).catch(() => null);
  return now && now.ino === made.ino && now.size === made.size && now.mtimeMs === made.mtimeMs ? signatureOf(now) : '';
}

/** Removes the staged file (once committed, nothing: its name is its writer's alone, never given again). */
export async function discardStaged({ temp, done }: Pick<StagedDataset, 'temp' | 'done'>): Promise<void> {
  try {
    await rm(temp, { force: true });
  } finally {
    done();
  }
}

/** The dataset was changed by someone else between reading it and replacing it. */
export class DatasetChanged extends CitiesApiError {
  constructor(file: string) {
    super(`${file} changed while cities were being added to it; nothing was written`);
  }
}

/** A file's `size` bytes as appending reads them, a part at a time. */
function fileBytes(handle: FileHandle, size: number): DatasetBytes {
  return {
    size,
    read: async (from, to) => {
      const bytes = Buffer.alloc(to - from);
      for (let done = 0; done < bytes.length; ) {
        const { bytesRead } = await handle.read(bytes, done, bytes.length - done, from + done);
        if (!bytesRead) return bytes.subarray(0, done);
        done += bytesRead;
      }
      return bytes;
    },
  };
}

/**
 * Checks, when a writable server starts, that POSTs can replace the dataset: a regular file
 * (through any symlinks), in a directory where its new versions can be created. Throws what
 * would stop every POST; returns lines to log (notes, and warnings so marked).
 */
export async function checkWritable(file: string): Promise<string[]> {
  const target = await realpath(file).catch(async (error: unknown) => {
    throw await fileSystemError(error, DATASET_ROLE, file);
  });
  const via = target === resolve(file) ? '' : ` (a link to ${target})`;
  const stats = await stat(target);
  if (!stats.isFile())
    throw new CitiesApiError(`${optionNamed('writable')} needs the dataset ${file}${via} to be a regular file`, 2);
  await access(dirname(target), constants.W_OK).catch(() => {
    throw new CitiesApiError(
      `${optionNamed('writable')}: cannot create files in ${dirname(target)}, where new versions of ${file}${via} are written before they replace it; make that directory writable`,
      2,
    );
  });
  if ((await lstat(`${target}.bak`).catch(() => null))?.isDirectory()) {
    throw new CitiesApiError(
      `${optionNamed('writable')}: ${target}.bak is a directory; the previous version of the dataset is kept under that name: move the directory away`,
      2,
    );
  }
  const warnings: string[] = [];
  if (via) warnings.push(`${file}${via}: POSTs replace ${target} (its previous version kept as ${target}.bak)`);
  if (stats.nlink > 1)
    warnings.push(
      `warning: ${target} has ${stats.nlink} hard links: each POST replaces it with a new file, so its other names keep the old data`,
    );
  return warnings;
}
