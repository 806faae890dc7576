import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import fg from 'fast-glob';
import { CitiesApiError } from './errors.js';
import { partsOf, reuse, sha256, VARIANTS, writeCompressed, writeParts, type Body } from './file-output.js';
import { MANIFEST_PATH, manifestJson, readManifest, type Manifest } from './manifest.js';
import { removeTree } from './remove-tree.js';
import { runBounded } from './run-bounded.js';
import { isAlive, lockSite, siteSiblings } from './site-lock.js';
import { WritePool } from './write-pool.js';

export interface SiteEntry {
  readonly path: string;
  /** The bytes, or for large files the parts to write one after the other. */
  readonly body: Body;
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
    if (!old && !(await isEmpty(outDir))) {
      throw new CitiesApiError(`${outDir} exists and is not a cities-api site; choose an empty or new directory (nothing was written)`, 2);
    }
    const { staging, previous } = siteSiblings(outDir);
    await removeTree(staging);
    try {
      const stats = await assemble(outDir, staging, old, entries, manifest, options);
      await swapIn(outDir, staging, previous);
      return stats;
    } catch (error) {
      await removeTree(staging);
      throw error;
    }
  } finally {
    await release();
  }
}

/** Builds the new tree in `staging`, reusing unchanged files of `outDir`. */
async function assemble(outDir: string, staging: string, old: Manifest | null, entries: Iterable<SiteEntry>, manifest: Omit<Manifest, 'files'>, options: WriteOptions): Promise<WriteStats> {
  const files: Record<string, string> = {};
  const compressed = new Set<string>();
  const counts = { written: 0, unchanged: 0, entries: 0 };
  const made = new Map<string, Promise<unknown>>();
  const ensureDir = (dir: string) => made.get(dir) ?? made.set(dir, mkdir(dir, { recursive: true })).get(dir)!;

  let pool: WritePool | undefined;
  const one = async (entry: SiteEntry) => {
    const parts = partsOf(entry.body);
    const hash = sha256(parts);
    const same = old?.files[entry.path] === hash;
    files[entry.path] = hash;
    const compress = !!entry.compress && options.compress;
    const paths = [entry.path];
    if (compress) {
      compressed.add(entry.path);
      paths.push(...VARIANTS.map((variant) => entry.path + variant));
    }
    const written = !same && Array.isArray(parts) && parts.length === 1 && (pool ??= new WritePool()).write(join(staging, entry.path), parts[0] as Buffer, compress);
    if (written) {
      await written;
      counts.written += paths.length;
      options.onProgress?.(++counts.entries);
      return;
    }
    await ensureDir(dirname(join(staging, entry.path)));
    for (const path of paths) {
      if (same && (await reuse(join(outDir, path), join(staging, path)))) counts.unchanged++;
      else {
        const variant = VARIANTS.find((v) => path === entry.path + v);
        await (variant ? writeCompressed(join(staging, path), parts, variant) : writeParts(join(staging, path), parts));
        counts.written++;
      }
    }
    options.onProgress?.(++counts.entries);
  };
  await runBounded(entries, one, IN_FLIGHT).finally(() => pool?.close());

  await ensureDir(dirname(join(staging, MANIFEST_PATH)));
  if (old && sameManifest(old, manifest, files) && (await reuse(join(outDir, MANIFEST_PATH), join(staging, MANIFEST_PATH)))) counts.unchanged++;
  else {
    await writeFile(join(staging, MANIFEST_PATH), manifestJson(manifest, files));
    counts.written++;
  }
  const kept = (path: string) => path === MANIFEST_PATH || path in files || VARIANTS.some((v) => path.endsWith(v) && compressed.has(path.slice(0, -v.length)));
  let removed = 0;
  for await (const path of listFiles(outDir)) if (!kept(path)) removed++;
  return { files: counts.written + counts.unchanged, written: counts.written, unchanged: counts.unchanged, removed };
}

/** Whether the old manifest says exactly what the new one would (so its file can be kept). */
function sameManifest(old: Manifest, manifest: Omit<Manifest, 'files'>, files: Readonly<Record<string, string>>): boolean {
  const { files: oldFiles, ...oldHead } = old;
  if (JSON.stringify(oldHead) !== JSON.stringify(manifest)) return false;
  let count = 0;
  for (const path in files) {
    if (oldFiles[path] !== files[path]) return false;
    count++;
  }
  return count === Object.keys(oldFiles).length;
}

async function isEmpty(dir: string): Promise<boolean> {
  for await (const _ of listFiles(dir)) return false;
  return true;
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
  if (hadOld) await removeTree(previous);
}

/** Relative paths of every file under a directory (none when it does not exist), streamed. */
export function listFiles(dir: string): AsyncIterable<string> {
  return fg.stream('**/*', { cwd: dir, dot: true, onlyFiles: true, followSymbolicLinks: false, suppressErrors: true }) as AsyncIterable<string>;
}

/** Holding the build lock, repairs what killed builds left beside a site that needs no writing. */
export async function tidySite(outDir: string): Promise<void> {
  const release = await lockSite(outDir);
  try {
    await recoverSite(outDir);
  } finally {
    await release();
  }
}

/**
 * Repairs what a killed build can leave: if the site was moved aside but the new one never
 * arrived, the previous site is moved back; staging trees and lock drafts of dead builders are removed.
 * Call it holding the build lock.
 */
export async function recoverSite(outDir: string): Promise<void> {
  const { parent, prefix } = siteSiblings(outDir);
  const leftovers = await fg(`${fg.escapePath(prefix)}{staging,previous,lock}-*`, { cwd: parent, dot: true, onlyFiles: false, deep: 1 });
  const outExists = await stat(outDir).then(() => true, () => false);
  for (const name of leftovers.sort()) {
    const pid = Number.parseInt(name.slice(name.lastIndexOf('-') + 1), 10);
    if (pid !== process.pid && isAlive(pid)) continue;
    if (!outExists && name.includes('.previous-') && !(await stat(outDir).then(() => true, () => false))) {
      await rename(join(parent, name), outDir);
    } else {
      await removeTree(join(parent, name));
    }
  }
}
