import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import fg from 'fast-glob';
import { CitiesApiError } from './errors.js';
import { MANIFEST_PATH, readManifest, type Manifest } from './manifest.js';
import { isAlive, lockSite, siteSiblings } from './site-lock.js';

export interface SiteEntry {
  readonly path: string;
  readonly body: string | Buffer;
  /** Also write `.gz` and `.br` siblings (for hosts and sirv to serve precompressed). */
  readonly compress?: boolean;
}

export interface WriteStats {
  readonly files: number;
  readonly written: number;
  readonly unchanged: number;
  readonly removed: number;
}

export interface WriteOptions {
  readonly compress: boolean;
  readonly onProgress?: (entriesDone: number) => void;
}

const IN_FLIGHT = 48;
const VARIANTS = {
  '.gz': (data: Buffer) => promisify(gzip)(data, { level: 9 }),
  '.br': (data: Buffer) => promisify(brotliCompress)(data, { params: { [zlib.BROTLI_PARAM_QUALITY]: 5, [zlib.BROTLI_PARAM_SIZE_HINT]: data.length } }),
} as const;

/**
 * Writes a whole site atomically and incrementally: a new tree is assembled next to the old one
 * (files whose hash is unchanged are hard-linked, so they keep their inode and mtime; the rest
 * are written), then swapped in with two renames. A failed or killed build leaves the old site.
 */
export async function writeSite(outDir: string, entries: Iterable<SiteEntry>, manifest: Omit<Manifest, 'files'>, options: WriteOptions): Promise<WriteStats> {
  await mkdir(dirname(outDir), { recursive: true });
  const release = await lockSite(outDir);
  try {
    await recoverSite(outDir);
    const old = await readManifest(outDir);
    if (!old && (await listFiles(outDir)).length) {
      throw new CitiesApiError(`${outDir} exists and is not a cities-api site; choose an empty or new directory (nothing was written)`, 2);
    }
    const { staging, previous } = siteSiblings(outDir);
    await rm(staging, { recursive: true, force: true });
    try {
      const stats = await assemble(outDir, staging, old, entries, manifest, options);
      await swapIn(outDir, staging, previous);
      return stats;
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
  } finally {
    await release();
  }
}

/** Builds the new tree in `staging`, reusing unchanged files of `outDir`. */
async function assemble(outDir: string, staging: string, old: Manifest | null, entries: Iterable<SiteEntry>, manifest: Omit<Manifest, 'files'>, options: WriteOptions): Promise<WriteStats> {
  const files: Record<string, string> = {};
  const counts = { written: 0, unchanged: 0, entries: 0 };
  const made = new Map<string, Promise<unknown>>();
  const ensureDir = (dir: string) => made.get(dir) ?? made.set(dir, mkdir(dir, { recursive: true })).get(dir)!;

  const put = async (path: string, data: Buffer, hash: string) => {
    await ensureDir(dirname(join(staging, path)));
    files[path] = hash;
    if (old?.files[path] === hash && (await reuse(join(outDir, path), join(staging, path)))) counts.unchanged++;
    else {
      await writeFile(join(staging, path), data);
      counts.written++;
    }
  };
  const one = async (entry: SiteEntry) => {
    const data = typeof entry.body === 'string' ? Buffer.from(entry.body) : entry.body;
    const hash = sha256(data);
    const same = old?.files[entry.path] === hash;
    await put(entry.path, data, hash);
    if (entry.compress && options.compress) {
      for (const [suffix, compress] of Object.entries(VARIANTS)) {
        const path = entry.path + suffix;
        const oldHash = old?.files[path];
        if (same && oldHash && (await reuse(join(outDir, path), join(staging, path)))) {
          files[path] = oldHash;
          counts.unchanged++;
        } else {
          const packed = await compress(data);
          await put(path, packed, sha256(packed));
        }
      }
    }
    options.onProgress?.(++counts.entries);
  };
  await runBounded(entries, one, IN_FLIGHT);

  const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const manifestText = `${JSON.stringify({ ...manifest, files: sorted }, null, 1)}\n`;
  const oldManifestText = old ? await readFile(join(outDir, MANIFEST_PATH), 'utf8') : undefined;
  await ensureDir(dirname(join(staging, MANIFEST_PATH)));
  if (manifestText === oldManifestText && (await reuse(join(outDir, MANIFEST_PATH), join(staging, MANIFEST_PATH)))) counts.unchanged++;
  else {
    await writeFile(join(staging, MANIFEST_PATH), manifestText);
    counts.written++;
  }
  const removed = (await listFiles(outDir)).filter((path) => path !== MANIFEST_PATH && !(path in files)).length;
  return { files: Object.keys(files).length + 1, written: counts.written, unchanged: counts.unchanged, removed };
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Hard-links an unchanged file into the new tree (a copy with the old mtime where links are not possible). */
async function reuse(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK' && code !== 'ENOTSUP') throw error;
    const { atime, mtime } = await stat(from);
    await copyFile(from, to);
    await utimes(to, atime, mtime);
    return true;
  }
}

/** Runs `task` over `items` with at most `limit` in flight; waits for all before returning or throwing. */
async function runBounded<T>(items: Iterable<T>, task: (item: T) => Promise<void>, limit: number): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: unknown;
  try {
    for (const item of items) {
      if (failure) break;
      const p: Promise<void> = task(item).catch((error) => void (failure ??= error)).finally(() => running.delete(p));
      running.add(p);
      if (running.size >= limit) await Promise.race(running);
    }
  } finally {
    await Promise.all(running);
  }
  if (failure) throw failure;
}

async function swapIn(outDir: string, staging: string, previous: string): Promise<void> {
  let hadOld = true;
  try {
    await rename(outDir, previous);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    hadOld = false;
  }
  try {
    await rename(staging, outDir);
  } catch (error) {
    if (hadOld) await rename(previous, outDir);
    throw error;
  }
  if (hadOld) await rm(previous, { recursive: true, force: true });
}

/** Relative paths of every file under a directory ([] when it does not exist). */
export function listFiles(dir: string): Promise<string[]> {
  return fg('**/*', { cwd: dir, dot: true, onlyFiles: true, followSymbolicLinks: false, suppressErrors: true });
}

/**
 * Repairs what a killed build can leave: if the site was moved aside but the new one never
 * arrived, the previous site is moved back; staging trees of dead builders are removed.
 * Call it holding the build lock.
 */
export async function recoverSite(outDir: string): Promise<void> {
  const { parent, prefix } = siteSiblings(outDir);
  const leftovers = await fg(`${fg.escapePath(prefix)}{staging,previous}-*`, { cwd: parent, dot: true, onlyDirectories: true, deep: 1 });
  const outExists = await stat(outDir).then(() => true, () => false);
  for (const name of leftovers.sort()) {
    const pid = Number(name.slice(name.lastIndexOf('-') + 1));
    if (pid !== process.pid && isAlive(pid)) continue;
    if (!outExists && name.includes('.previous-') && !(await stat(outDir).then(() => true, () => false))) {
      await rename(join(parent, name), outDir);
    } else {
      await rm(join(parent, name), { recursive: true, force: true });
    }
  }
}
