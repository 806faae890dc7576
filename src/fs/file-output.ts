import { createHash } from 'node:crypto';
import { linkSync, lstatSync, unlinkSync, writeFile as writeFileCallback } from 'node:fs';
import { constants, type Stats } from 'node:fs';
import { copyFile, lstat, open, rm, unlink, utimes } from 'node:fs/promises';
import { promisify } from 'node:util';
import { syncDir, syncFile } from './durable.js';

// Writing one file: its bytes (one buffer, or parts for large files so they are never assembled
// in memory), its hash, or a link to an unchanged copy.
// Files are always created new (never written through a link that has their name), and each
// write says the inode, size, mtime and ctime it left, for the stat cache.

/** A file's bytes: text, a buffer, or parts (an array, or a re-iterable sequence produced on demand). */
/** What a build records of a file it wrote, to know it again (stat-cache-format.ts). */
export type FileStat = Pick<Stats, 'ino' | 'size' | 'mtimeMs' | 'ctimeMs'>;

export type Body = string | Uint8Array | Iterable<Uint8Array>;

// The callback forms, promisified: lighter per file than fs/promises (no FileHandle per write).
const writeFileAsync = promisify(writeFileCallback);

/** Bodies below this are assembled into one buffer (one hash update, one write); larger ones stream. */
const ASSEMBLE_BELOW = 1024 * 1024;
const IOV_MAX = 1024;
/** A body as buffers to write in order: an array of small parts joined into one; a sequence that is not an array (re-iterable) written part by part, never joined. */
export function partsOf(body: Body): Iterable<Uint8Array> {
  if (typeof body === 'string') return [Buffer.from(body)];
  if (body instanceof Uint8Array) return [body];
  if (!Array.isArray(body)) return body;
  const parts = body as readonly Uint8Array[];
  const length = parts.reduce((n, part) => n + part.length, 0);
  return parts.length === 1 || length >= ASSEMBLE_BELOW ? parts : [Buffer.concat(parts, length)];
}

export function sha256(data: Body): string {
  const hash = createHash('sha256');
  if (typeof data === 'string' || data instanceof Uint8Array) hash.update(data);
  else for (const part of data) hash.update(part);
  return hash.digest('hex');
}

export async function writeParts(path: string, parts: Iterable<Uint8Array>): Promise<FileStat> {
  const single = Array.isArray(parts) && parts.length === 1 ? (parts[0] as Uint8Array) : undefined;
  if (single) {
    await writeFileAsync(path, single, { flag: 'wx' });
    return lstat(path);
  }
  const handle = await open(path, 'wx');
  try {
    let batch: Uint8Array[] = [];
    let size = 0;
    for (const part of parts) {
      batch.push(part);
      size += part.length;
      if (batch.length === IOV_MAX || size >= ASSEMBLE_BELOW) {
        await handle.writev(batch);
        batch = [];
        size = 0;
      }
    }
    if (batch.length) await handle.writev(batch);
    return await handle.stat();
  } finally {
    await handle.close();
  }
}

/**
 * Hard-links `from` at `to`, synchronously (two system calls, no hop through the thread pool: a
 * rebuild links most of a large site). The new entry's lstat (whatever `from` was: a file, a
 * link, a FIFO...); null when `from` is gone; undefined when it cannot be linked.
 */
export function linkEntry(from: string, to: string): Stats | null | undefined {
  try {
    linkSync(from, to);
  } catch (error) {
    // Anything else (another filesystem, a directory, too many links, no permission): the caller copies, which says what is wrong if anything is.
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
  }
  return lstatSync(to);
}

/**
 * Puts an unchanged file of the old tree (whose lstat gave `stats`) into the new one as a hard
 * link (a copy keeping its mtime where links are impossible, synced to disk), so it is not rewritten. Resolves
 * with the new entry's inode, size, mtime and ctime; null when the old file is gone or was replaced
 * since `stats` were taken (then nothing is left at `to`).
 */
export async function reuse(from: string, to: string, stats: FileStat): Promise<FileStat | null> {
  const linked = linkEntry(from, to);
  if (linked === null) return null;
  if (linked === undefined) {
    await copyFile(from, to, constants.COPYFILE_EXCL);
    const copied = await lstat(to);
    if (copied.size !== stats.size) return unlink(to).then(() => null);
    await utimes(to, new Date(stats.mtimeMs), new Date(stats.mtimeMs));
    await syncFile(to);
    return lstat(to);
  }
  if (linked.isFile() && linked.ino === stats.ino) return linked;
  unlinkSync(to);
  return null;
}

/** Writes a file that must be new: whatever has its name (a link to someone's file, say) is removed, never written through. */
export async function writeNew(path: string, bytes: Uint8Array | string): Promise<void> {
  await rm(path, { force: true });
  const file = await open(path, 'wx');
  try {
    await file.writeFile(bytes);
  } finally {
    await file.close();
  }
}

/** Whether an entry has that name (a link counts, not followed). */
export const exists = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  );

/**
 * Makes a directory's entries durable (fsync of the directory); false where that failed (the
 * directory is gone, say). On ext4 this commits the journal, so it also pays for the metadata of
 * every file written before it (a build's).
 */
export const syncDirectory = (dir: string): Promise<boolean> =>
  syncDir(dir).then(
    () => true,
    () => false,
  );
