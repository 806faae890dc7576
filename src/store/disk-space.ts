import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import { bytesOnDisk, ESTIMATE_SLACK, formatBytes } from '../site/size.js';

// Free space on the filesystem a site is written to: checked before a build (refusing a site
// that cannot fit) and while it writes (stopping before the disk fills, the old site untouched).

export interface DiskSpace {
  /** The directory statfs was asked about: the site directory or its nearest existing parent. */
  readonly path: string;
  /** Bytes and inodes an unprivileged process may still use, and the filesystem's size. */
  readonly free: number;
  readonly freeInodes: number;
  /** 0 where the filesystem has no fixed number of inodes (btrfs, tmpfs without nr_inodes...). */
  readonly inodes: number;
  readonly total: number;
  readonly blockSize: number;
}

/** The space of the filesystem `path` is on, or would be once created. */
export async function diskSpace(path: string): Promise<DiskSpace> {
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      const s = await statfs(dir);
      return {
        path: dir,
        free: s.bavail * s.bsize,
        freeInodes: s.ffree,
        inodes: s.files,
        total: s.blocks * s.bsize,
        blockSize: s.bsize,
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(dir) === dir) throw error;
    }
  }
}

/** What the build leaves free by default: 5 % of the filesystem, at most 1 GB. */
export function defaultMinFree(space: DiskSpace): number {
  return Math.min(1e9, Math.round(space.total * 0.05));
}

/** Bytes written between two looks at the free space while building. */
const CHECK_EVERY = 64 * 1024 * 1024;

/** Stops a build (exit 2) once the free space of its filesystem falls below `minFree`. */
export class SpaceGuard {
  private since = 0;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly minFree: number,
    private readonly every = CHECK_EVERY,
  ) {}

  /** Counts bytes written; every `every` bytes, resolves once the free space was checked (rejects when too low). */
  wrote(bytes: number): Promise<void> | undefined {
    this.since += bytes;
    if (this.since < this.every) return this.checking;
    this.since = 0;
    this.checking = this.check().finally(() => (this.checking = undefined));
    return this.checking;
  }

  async check(): Promise<void> {
    const space = await diskSpace(this.dir);
    if (space.free < this.minFree) {
      throw new CitiesApiError(
        `stopped building ${this.dir}: the filesystem of ${space.path} has ${formatBytes(space.free)} free, below the ${formatBytes(this.minFree)} a build leaves free (${optionNamed('minFree')}); ` +
          'the site was left as it was. Free some space, or precompute fewer orderings or page sizes',
        2,
      );
    }
  }
}

export interface SizeOnDisk {
  readonly files: number;
  readonly jsonBytes: number;
  readonly compressedBytes: number;
  /** The dataset file and the edge data. */
  readonly dataBytes?: number;
}

/**
 * Refuses (exit 2, before anything is written) a build whose new files cannot fit on the
 * filesystem of `out` while leaving `minFree` (default: defaultMinFree). Resolves with the free
 * space the build must leave (for a SpaceGuard).
 */
export async function checkFreeSpace(
  out: string,
  site: SizeOnDisk,
  reusable: SizeOnDisk | null,
  minFree?: number,
): Promise<number> {
  const space = await diskSpace(out);
  const keep = minFree ?? defaultMinFree(space);
  const shortage = spaceShortage(space, site, reusable, keep);
  if (shortage) throw new CitiesApiError(`not enough free space to build ${out}: ${shortage}`, 2);
  return keep;
}

/**
 * Why a site does not fit (null when it does). The new tree is assembled beside the old site,
 * which is only deleted after the swap: the files the build writes must fit beside it and leave
 * `keep` free; files it can reuse (`reusable`: at most, as hard links) cost nothing.
 */
export function spaceShortage(
  space: DiskSpace,
  site: SizeOnDisk,
  reusable: SizeOnDisk | null,
  keep: number,
): string | null {
  const bytes = Math.max(
    0,
    bytesOnDisk(site, space.blockSize) - (reusable ? bytesOnDisk(reusable, space.blockSize) : 0),
  );
  const files = Math.max(0, site.files - (reusable?.files ?? 0));
  const noRoom = bytes + keep > space.free;
  const noInodes = space.inodes > 0 && files > space.freeInodes;
  if (!noRoom && !noInodes) return null;
  const beyond = reusable ? ' beyond what it can reuse of the old site' : '';
  const inodes = noInodes
    ? `, and ${space.freeInodes.toLocaleString('en')} free inodes for ${files.toLocaleString('en')} files`
    : '';
  return (
    `the site needs about ${formatBytes(bytes)}${beyond} (${files.toLocaleString('en')} files; the estimate + ${Math.round((ESTIMATE_SLACK - 1) * 100)} %) ` +
    `and a build leaves ${formatBytes(keep)} free (${optionNamed('minFree')}), but the filesystem of ${space.path} has ${formatBytes(space.free)} free${inodes}. ` +
    `To fit: free some space, build on another filesystem (${optionNamed('site')}), precompute fewer orderings or page sizes, or lower ${optionNamed('minFree')} (0 keeps no margin). Nothing was written.`
  );
}
