import { lstat, readlink, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import { fileSystemError, isErrno, type PathRole } from '../fs/fs-error.js';

// Where a build may write: the site directory with every symbolic link resolved (a build works
// on the real directory, so a link such as `current -> releases/v1` is never renamed or deleted
// and always points at a whole site), and the places a build must refuse.

const MAX_LINKS = 40;

/** The site directory, as file system errors name it. */
export const SITE_ROLE: PathRole = {
  what: 'site directory',
  option: optionNamed('site'),
  note: 'the site was left as it was',
};

/**
 * The real path of a site directory that may not exist yet: symbolic links anywhere in it are
 * followed, a dangling last link included (its target is where the site goes).
 */
export async function resolveSiteDir(path: string): Promise<string> {
  try {
    return await follow(resolve(path), 0);
  } catch (error) {
    if (error instanceof CitiesApiError) throw error;
    if (isErrno(error) && error.code !== 'ELOOP') throw await fileSystemError(error, SITE_ROLE, path);
    const why =
      (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'too many symbolic links' : (error as Error).message;
    throw new CitiesApiError(`cannot use ${path} as the site directory: ${why}`, 2);
  }
}

async function follow(path: string, links: number): Promise<string> {
  if (links > MAX_LINKS) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' });
  try {
    return await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const target = await readlink(path).catch(() => undefined);
  if (target !== undefined) return follow(resolve(dirname(path), target), links + 1);
  const parent = dirname(path);
  return parent === path ? path : join(await follow(parent, links), basename(path));
}

/** Whether `path` is `dir` itself or inside it (both absolute). */
export function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

export interface SiteLocation {
  /** The site directory, resolved (resolveSiteDir). */
  readonly out: string;
  readonly data: string;
  /** The working directory of whoever asked for the build. */
  readonly cwd: string;
}

/**
 * Refuses (exit 2, before anything is read or written) a site directory a build must not replace:
 * one holding the dataset, the working directory or the home directory, the filesystem root, a
 * path that is not a directory, or a mount point.
 */
export async function checkSiteLocation({ out, data, cwd }: SiteLocation): Promise<void> {
  const refuse = (why: string) => new CitiesApiError(`cannot build into ${out}: ${why} (nothing was written)`, 2);
  if (dirname(out) === out)
    throw refuse(`it is the filesystem root; choose a directory of its own with ${optionNamed('site')}, e.g. dist`);
  for (const [name, dir] of [
    ['working directory', cwd],
    ['home directory', homedir()],
  ] as const) {
    const real = await realpath(dir).catch(() => resolve(dir));
    if (isWithin(real, out))
      throw refuse(
        `it is or contains the ${name} ${dir}, and a build replaces the whole directory; choose a directory of its own with ${optionNamed('site')}, e.g. dist`,
      );
  }
  const dataset = await realpath(data).catch(() => resolve(data));
  if (isWithin(dataset, out)) {
    throw refuse(
      `the dataset ${data} is inside it, and a build replaces the whole directory; keep the dataset outside the site (e.g. data/cities.csv)`,
    );
  }
  const stats = await lstat(out).catch(() => null);
  if (stats && !stats.isDirectory()) throw refuse('it is a file, not a directory; choose a directory');
  // A build renames the old tree aside and the new one into place, which a mount point refuses (EBUSY).
  if (stats && stats.dev !== (await lstat(dirname(out))).dev)
    throw refuse(
      `it is a mount point (a volume), and a build swaps the whole directory by renaming it; mount its parent directory instead, or build into a directory inside it (e.g. ${optionNamed('site')} ${join(out, 'site')})`,
    );
}
