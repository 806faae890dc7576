import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runBounded } from './run-bounded.js';

// Making what was written durable: a file's bytes (fdatasync), a directory's entries (fsync).
// Without them a power loss (not a kill) can bring back a renamed tree whose files are empty or
// missing: the file system may commit a rename before the data of the files it publishes.

/**
 * Makes a file's bytes durable (fdatasync). Opened for reading (a copy of someone's read-only file
 * is synced too), but on Windows, which flushes no file opened read-only.
 */
export async function syncFile(path: string): Promise<void> {
  const handle = await open(path, process.platform === 'win32' ? 'r+' : 'r');
  try {
    await handle.datasync().catch((error: NodeJS.ErrnoException) => Promise.reject(named(error, path)));
  } finally {
    await handle.close();
  }
}

/** A sync's error (a handle's: it names no file) naming the file or directory synced. */
function named(error: NodeJS.ErrnoException, path: string): NodeJS.ErrnoException {
  error.path ??= path;
  return error;
}

/** Errors of a file system that cannot sync a directory (it keeps its entries its own way). */
const CANNOT = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP']);

/** Makes a directory's entries durable (fsync); nothing where directories cannot be synced (Windows, some file systems). */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (error) {
    if (!CANNOT.has((error as NodeJS.ErrnoException).code ?? '')) throw named(error as NodeJS.ErrnoException, dir);
  } finally {
    await handle.close();
  }
}

/** Syncs each directory of `root` named in `dirs` (relative, '.' the root itself) and every parent of theirs up to `root`. */
export async function syncDirectories(root: string, dirs: Iterable<string>): Promise<void> {
  const all = new Set<string>();
  for (let dir of dirs) {
    while (!all.has(dir)) {
      all.add(dir);
      if (dir === '.') break;
      dir = dirname(dir);
    }
  }
  await runBounded(all, (dir) => syncDir(join(root, dir)), 8);
}
