import { closeSync, existsSync, openSync } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import sirv from 'sirv';
import { ROUTES } from '../core/route-table.js';

// The files of one build of a site, and only those. The site directory is opened once and read
// through that descriptor (/proc/self/fd/N on Linux): a build swaps a new tree in by renaming, so
// the old tree stays what this server reads until it loads the new one (a file the build has
// since removed is missing: answered live, from the same build's data). A file is sent only when
// it and every directory above it are real, inside the site: a symbolic link (to /etc/passwd, or
// a directory elsewhere) is treated as missing.

export type FileHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

export interface PinnedSiteFiles {
  /** The path the site's files are read through (the pinned directory, else the directory). */
  readonly root: string;
  /** sirv, for files inside the site only; `next` for anything else. */
  readonly files: FileHandler;
  /** Lets the directory go (after the last read of this build). */
  release(): void;
  /** A path under `root` as the user knows it: under the site directory (a message never names /proc/self/fd/N). */
  named(path: string): string;
}

const PINNABLE = process.platform === 'linux' && existsSync('/proc/self/fd');

export function openSiteFiles(dir: string): PinnedSiteFiles {
  const fd = PINNABLE ? pin(dir) : undefined;
  const root = fd === undefined ? dir : `/proc/self/fd/${fd}`;
  // sirv's dev mode looks each file up when asked instead of walking the whole tree at start:
  // a large site holds hundreds of thousands of files, and hot ones are cached (FileCache).
  const serve = sirv(root, {
    dev: true,
    etag: true,
    gzip: true,
    brotli: true,
    extensions: [],
    // The reference sends `Vary: Accept` only; it is kept exactly (see docs on caching).
    setHeaders: (res) => res.setHeader(ROUTES.header.vary, ROUTES.headers.Vary),
  });
  let released = false;
  return {
    root,
    files: (req, res, next) => {
      inside(root, req).then(
        (ok) => (ok ? serve(req, res, next) : next()),
        () => next(),
      );
    },
    release() {
      if (fd !== undefined && !released) closeSync(fd);
      released = true;
    },
    named: (path) => (path === root || path.startsWith(`${root}/`) ? dir + path.slice(root.length) : path),
  };
}

/** The directory opened, or undefined when it cannot be (missing: the caller says so). */
function pin(dir: string): number | undefined {
  try {
    return openSync(dir, 'r');
  } catch {
    return undefined;
  }
}

/** What sirv (extensions none, gzip and brotli on) may send for a path: the file, or its `.gz`/`.br`. */
function candidates(path: string, acceptEncoding: string): string[] {
  return [
    ...(/(br|brotli)/i.test(acceptEncoding) ? ['.br'] : []),
    ...(acceptEncoding.includes('gzip') ? ['.gz'] : []),
    '',
  ].map((suffix) => path + suffix);
}

/**
 * Whether every file sirv may send for the request is inside the site: its directory is the
 * site's own (no link on the way: its real path is the root's plus its name) and none of the
 * candidates is a link or a directory (sirv would then look inside it).
 */
async function inside(root: string, req: IncomingMessage): Promise<boolean> {
  let path = (req.url ?? '/').split('?')[0]!;
  if (path.includes('%')) path = decodeURI(path); // as sirv reads it
  path = path.replace(/^\/+/, '');
  if (path.split('/').some((part) => part === '..' || part === '.')) return false;
  const names = candidates(path, String(req.headers['accept-encoding'] ?? ''));
  const [realRoot, realDir, ...stats] = await Promise.all([
    realpath(root),
    realpath(join(root, dirname(path))).catch(() => null),
    ...names.map((name) => lstat(join(root, name)).catch(() => null)),
  ]);
  if (realDir === null) return true; // no such directory: sirv finds nothing either
  if (realDir !== join(realRoot, dirname(path))) return false;
  return stats.every((stat) => !stat || (!stat.isSymbolicLink() && !stat.isDirectory()));
}
