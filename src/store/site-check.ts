import { constants, readFile } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { brotliDecompress, createBrotliDecompress, createGunzip, gunzip } from 'node:zlib';
import { createHash } from 'node:crypto';
import { readSiteFiles } from './manifest-file.js';
import { StatCache } from './stat-cache.js';
import type { Slot } from './stat-cache-format.js';
import { checkShares, pathsOf } from './stat-check.js';
import { startThread, type WorkerChannel } from '../proc/workers.js';
import type { CheckProtocol, Records } from './check-worker.js';
import type { Found } from './stat-check.js';

// Whether the files of a built site are still what the build left, without trusting anything
// the files themselves could have become: a symbolic link or a directory is never followed.
// By stat (checkSiteFiles, on two threads) or by content (holdsBytes).

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
export async function holdsBytes(
  path: string,
  slot: Slot,
  size: number,
  hash: string,
  bytes?: Uint8Array,
): Promise<boolean> {
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

/** A check under way: its result (this thread takes its share of the files), or cancelled (also when disposed: `using`). */
export interface PendingCheck extends Disposable {
  /** The check's result (the same each call). */
  result(): Promise<SiteCheck>;
  cancel(): void;
}

const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Checks every file a built site's manifest lists, and the `.gz`/`.br` the build wrote beside it,
 * with one lstat each against the stat cache: what git does for `git status`. Reads no file. The
 * manifest itself is checked by the cache (bound to its inode, size and mtime).
 */
export function checkSiteFiles(siteDir: string): Promise<SiteCheck> {
  return startSiteCheck(siteDir).result();
}

/** Below this many files (about 40 ms of lstats) a helper thread (about 50 ms of CPU to start) is not worth it. */
export const HELPER_MIN_FILES = 20_000;

/**
 * Starts checking a site of about `files` files (with `.gz`/`.br`) at once, on a helper thread that reads its manifest and stat cache
 * while this thread does other work (reads the dataset); result() then checks files on this
 * thread too, the two taking chunks of files from one shared counter. If the helper thread
 * fails, or the site is small, this thread checks alone (and reports what is wrong with the site).
 */
export function startSiteCheck(siteDir: string, files = Infinity): PendingCheck {
  let once: Promise<SiteCheck> | undefined;
  const alone: PendingCheck = {
    result: () => (once ??= checkAlone(siteDir)),
    cancel: () => undefined,
    [Symbol.dispose]: () => undefined,
  };
  if (files < HELPER_MIN_FILES) return alone;
  const next = new SharedArrayBuffer(4);
  try {
    return new HelpedCheck(
      siteDir,
      startThread<CheckProtocol>('store/check-worker', { name: 'the check helper thread', data: { siteDir, next } }),
      next,
    );
  } catch {
    return alone;
  }
}

class HelpedCheck implements PendingCheck {
  // Dropped once used or cancelled: the paths and records the helper sent are not kept for the rest of a build.
  private first: Promise<Records | 'none' | 'failed'> | null;
  private last: Promise<Found | 'failed'> | null;
  private done: Promise<SiteCheck> | undefined;

  constructor(
    private readonly siteDir: string,
    private readonly thread: WorkerChannel<CheckProtocol>,
    private readonly next: SharedArrayBuffer,
  ) {
    // A helper that fails or ends before it answers leaves the check to this thread.
    this.first = thread.call('records', undefined).then(
      (records) => records ?? 'none',
      () => 'failed' as const,
    );
    this.last = thread.call('found', undefined).catch(() => 'failed' as const);
  }

  result(): Promise<SiteCheck> {
    return (this.done ??= this.check());
  }

  private async check(): Promise<SiteCheck> {
    const { first, last, siteDir } = this;
    try {
      const records = await first;
      if (records === 'none') return { changed: [], unverified: true };
      if (!records || records === 'failed') return await checkAlone(siteDir);
      const mine = await checkShares(
        siteDir,
        pathsOf(records.paths),
        StatCache.of(records.paths, records.data),
        new Int32Array(this.next),
        pause,
      );
      const theirs = await last;
      if (!theirs || theirs === 'failed') return await checkAlone(siteDir);
      return {
        changed: [...mine, ...theirs].sort((a, b) => a[0] - b[0]).flatMap(([, names]) => names),
        unverified: false,
      };
    } finally {
      this.cancel();
    }
  }

  cancel(): void {
    this.first = this.last = null;
    void this.thread.stop();
  }

  [Symbol.dispose](): void {
    this.cancel();
  }
}

/** The check on this thread alone, yielding to its event loop between chunks (a server rebuilding keeps answering). */
async function checkAlone(siteDir: string): Promise<SiteCheck> {
  const site = await readSiteFiles(siteDir);
  const cache = site && (await StatCache.read(siteDir, site));
  if (!site || !cache) return { changed: [], unverified: true };
  const found = await checkShares(siteDir, site.files, cache, new Int32Array(1), pause);
  return { changed: found.flatMap(([, names]) => names), unverified: false };
}
