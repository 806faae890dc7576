import { constants, lstatSync, readFile, type Stats } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { brotliDecompress, createBrotliDecompress, createGunzip, gunzip } from 'node:zlib';
import { createHash } from 'node:crypto';
import { VARIANTS } from './file-output.js';
import { readSiteFiles, type SiteFiles } from './manifest-file.js';
import { StatCache, type Slot } from './stat-cache.js';

// Whether the files of a built site are still what the build left, without trusting anything
// the files themselves could have become: a symbolic link or a directory is never followed.

/** Directories of a site checked, once each, to be real directories all the way down from its root. */
export class RealDirs {
  private readonly known = new Map<string, Promise<boolean>>();

  constructor(private readonly root: string) {}

  /** Whether `dir` (relative to the root; '.' is the root) is a directory reached through no symbolic link. */
  ok(dir: string): Promise<boolean> {
    if (dir === '.' || dir === '') return Promise.resolve(true);
    let known = this.known.get(dir);
    if (!known) {
      known = this.ok(dirname(dir)).then(async (up) => up && !!(await lstat(join(this.root, dir)).catch(() => null))?.isDirectory());
      this.known.set(dir, known);
    }
    return known;
  }
}

/** Files up to this size are read whole (one read, decompressed in one call); larger ones are streamed. */
const READ_WHOLE = 4 * 1024 * 1024;
const readFileAsync = promisify(readFile);
// Open flags as a number (Node takes them; @types/node lists only strings): a link in the file's place fails (ELOOP).
const READ_NO_LINK = (constants.O_RDONLY | constants.O_NOFOLLOW) as unknown as string;
const gunzipAsync = promisify(gunzip);
const brotliAsync = promisify(brotliDecompress);

/**
 * Whether a regular file (`size` bytes, as lstat said) holds `bytes` (hashed `hash`) as they
 * are (slot 0) or gzip- (1) or brotli-compressed (2). A link in its place is never followed; a
 * file that cannot be read or decoded holds nothing.
 */
export async function holdsBytes(path: string, slot: Slot, size: number, hash: string, bytes?: Uint8Array): Promise<boolean> {
  try {
    if (size > READ_WHOLE) return (await streamedHash(path, slot)) === hash;
    const raw = await readFileAsync(path, { flag: READ_NO_LINK });
    const content = slot === 1 ? await gunzipAsync(raw) : slot === 2 ? await brotliAsync(raw) : raw;
    return bytes ? content.equals(bytes) : createHash('sha256').update(content).digest('hex') === hash;
  } catch {
    return false;
  }
}

async function streamedHash(path: string, slot: Slot): Promise<string> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const hash = createHash('sha256');
    const source = file.createReadStream({ autoClose: false });
    if (slot) await pipeline(source, slot === 1 ? createGunzip() : createBrotliDecompress(), hash);
    else await pipeline(source, hash);
    return hash.digest('hex');
  } finally {
    await file.close();
  }
}

export interface SiteCheck {
  /** Files of the site (and `.gz`/`.br` siblings) whose type, inode, size or mtime is not what the build recorded. */
  readonly changed: readonly string[];
  /** The site has no stat records for its manifest (cache deleted, a killed build, a copied site): nothing could be checked. */
  readonly unverified: boolean;
}

/** Files lstat'ed between two yields to the event loop (a server rebuilding must keep answering). */
const BATCH = 2000;

/**
 * Checks every file a built site's manifest lists, and the `.gz`/`.br` the build wrote beside it,
 * with one lstat each against the stat cache: what git does for `git status`. Reads no file. The
 * manifest itself is checked by the cache (bound to its inode, size and mtime).
 */
export async function checkSiteFiles(siteDir: string, manifest?: SiteFiles | null): Promise<SiteCheck> {
  const site = manifest ?? (await readSiteFiles(siteDir));
  const cache = site && (await StatCache.read(siteDir, site));
  if (!site || !cache) return { changed: [], unverified: true };
  const dirs = new RealDirs(siteDir);
  const changed: string[] = [];
  for (let i = 0; i < site.files.size; i++) {
    const path = site.files.path(i);
    if (i % BATCH === BATCH - 1) await new Promise((resolve) => setImmediate(resolve));
    const realDir = await dirs.ok(dirname(path));
    for (const slot of cache.slotsAt(i)) {
      const name = slot ? path + VARIANTS[slot - 1] : path;
      const stats = realDir ? lstatOrNull(join(siteDir, name)) : null;
      if (!stats?.isFile() || !cache.matchesAt(i, slot, stats)) changed.push(name);
    }
  }
  return { changed, unverified: false };
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
