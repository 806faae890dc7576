import { lstat, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { reuse, sha256, writeParts, type FileStat } from '../fs/file-output.js';
import type { FileList } from '../fs/file-list.js';
import { MANIFEST_PATH, manifestText, type Manifest, type ManifestFiles } from '../site/manifest.js';
import type { SiteFiles } from './manifest-file.js';
import { holdsBytes } from './site-check.js';
import { syncFile } from '../fs/durable.js';

/**
 * Puts the manifest into staging (synced to disk when `durable`; when linked, when `syncLinked`): the old one, linked, when it says exactly the same and is as
 * built (the stat cache vouches for it) or holds the very bytes the build would write.
 */
export async function placeManifest(
  outDir: string,
  staging: string,
  old: SiteFiles | null,
  manifest: Omit<Manifest, 'files'>,
  files: FileList,
  {
    reuseOld,
    durable,
    syncLinked,
  }: { reuseOld: 'no' | 'as built' | 'if same bytes'; durable: boolean; syncLinked: boolean },
): Promise<{ stats: FileStat; reused: boolean }> {
  const to = join(staging, MANIFEST_PATH);
  await mkdir(dirname(to), { recursive: true });
  const order = files.sorted();
  const listed: ManifestFiles = {
    size: order.length,
    path: (i) => files.path(order[i]!),
    hash: (i) => files.hash(order[i]!),
  };
  // Made piece by piece as it is hashed or written: a large site's manifest is never one string.
  const text: Iterable<Uint8Array> = {
    *[Symbol.iterator]() {
      for (const piece of manifestText(manifest, listed)) yield Buffer.from(piece);
    },
  };
  if (reuseOld !== 'no' && old && sameManifest(old, manifest, listed)) {
    const from = join(outDir, MANIFEST_PATH);
    const stats = await lstat(from).catch(() => null);
    const same =
      !!stats?.isFile() && (reuseOld === 'as built' || (await holdsBytes(from, 0, stats.size, sha256(text))));
    const linked = same && stats && (await reuse(from, to, stats));
    if (linked && syncLinked) await syncFile(to);
    if (linked) return { stats: linked, reused: true };
  }
  const stats = await writeParts(to, text);
  if (durable) await syncFile(to);
  return { stats, reused: false };
}

/** The manifest's stats now (its ctime moved if it was linked), when still the file placed. */
export async function settledStats(outDir: string, placed: FileStat): Promise<FileStat> {
  const now = await lstat(join(outDir, MANIFEST_PATH)).catch(() => null);
  return now?.isFile() && now.ino === placed.ino && now.size === placed.size && now.mtimeMs === placed.mtimeMs
    ? now
    : placed;
}

/** Whether the old manifest says exactly what the new one would (so its file can be kept). */
function sameManifest(old: SiteFiles, manifest: Omit<Manifest, 'files'>, files: ManifestFiles): boolean {
  const { files: oldFiles, ...oldHead } = old;
  if (JSON.stringify(oldHead) !== JSON.stringify(manifest) || files.size !== oldFiles.size) return false;
  for (let i = 0; i < files.size; i++)
    if (oldFiles.path(i) !== files.path(i) || oldFiles.hash(i) !== files.hash(i)) return false;
  return true;
}
