import { open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import { draftName } from '../fs/dead-drafts.js';
import { isErrno } from '../fs/fs-error.js';
import { isLiveWriter } from '../fs/lock-holder.js';
import { dropToken, newToken } from '../fs/lock-tokens.js';
import { siteSiblings, underStepLock } from '../fs/lock.js';
import { createThrough, replaceThrough } from '../fs/through-draft.js';
import { resolveSiteDir } from '../store/site-path.js';
import { DEFAULT_LOCK_WAIT } from './build-options.js';

// A preview (serve --data without --base-url) builds its site with links on its own URL, so two
// previews of one directory would rewrite each other's links: the first would serve pages
// linking to the second, dead once it stops. A preview says it is running in `.NAME.preview`
// beside the site (its pid, a token of this process's holders' table and its URL); another one,
// on another URL, is refused while it runs. The threads of a process share its pid: the token
// tells whether a preview of this pid still runs, in whichever thread (lock-tokens.ts).
// The check and the write are one step: a marker appears whole where none is, in one link of a
// written draft, so of two previews started at once one links first and the other reads its
// marker; one there is replaced (its preview gone, or on this URL) by one taker at a time, under
// `.NAME.preview-lock`, as a dead holder's lock is (lock-file.ts).

interface Marker {
  readonly pid: number;
  readonly url: string;
  /** Absent in a marker an older version wrote. */
  readonly token?: string;
  readonly mtimeMs: number;
}

/** A file of the marker's name that is not one (a user's, a directory, unreadable): left alone. */
const FOREIGN = 'foreign';

/** The taking of a marker, then the taker's unmarking (none when nothing was written). */
type Unmark = () => Promise<void>;

/**
 * Marks the site directory `dir` as previewed at `url` by this thread, or refuses (exit 2,
 * nothing written) when another preview, still running, serves it at another URL; `wait` (ms):
 * for another preview taking the marker at that moment. Returns the unmarking. A marker that
 * cannot be written (a read-only parent), or a file of its name that is not one, leaves the
 * preview unmarked.
 */
export async function markPreview(dir: string, url: string, wait = DEFAULT_LOCK_WAIT): Promise<Unmark> {
  const { parent, prefix } = siteSiblings(await resolveSiteDir(dir));
  const file = join(parent, `${prefix}preview`);
  const token = newToken();
  let marked = false;
  try {
    marked = await placed(dir, file, url, token, wait);
  } catch (error) {
    if (!isErrno(error)) {
      dropToken(token);
      throw error;
    }
  }
  if (!marked) {
    dropToken(token);
    return async () => {};
  }
  let held = true;
  return async () => {
    if (!held) return;
    held = false;
    // Removed while the token is held: no taker finds it dead between the read and the removal.
    try {
      const marker = await markerIn(file);
      if (marker !== FOREIGN && marker?.token === token) await rm(file, { force: true });
    } catch {
      // Left: the next preview finds it dead.
    } finally {
      dropToken(token);
    }
  };
}

/** Whether this preview's marker was put at `file`, in one step; refused when another's is live there. */
async function placed(dir: string, file: string, url: string, token: string, wait: number): Promise<boolean> {
  const drafts = draftName(`${file}-`);
  const text = `${JSON.stringify({ pid: process.pid, url, token })}\n`;
  const write = (draft: string) => writeFile(draft, text, { flag: 'wx' });
  // Few rounds: each is a marker that disappeared (its preview stopped) between the link and the read.
  for (let round = 0; round < 5; round++) {
    if (await createThrough(drafts, file, write)) return true;
    const taken = await underStepLock(`${file}-lock`, `marks a preview of ${dir}`, wait, async () => {
      const other = await markerIn(file);
      if (other === null || other === FOREIGN) return other;
      if (other.url !== url && isLiveWriter(other, other)) throw previewRunning(dir, url, other);
      await replaceThrough(drafts, file, write);
      return true;
    });
    if (taken !== null) return taken === true;
  }
  return false;
}

/** The preview running on the site directory `real` (resolved), as its marker says, or null. */
export async function runningPreview(real: string): Promise<Pick<Marker, 'pid' | 'url'> | null> {
  const { parent, prefix } = siteSiblings(real);
  const marker = await markerIn(join(parent, `${prefix}preview`));
  return marker && marker !== FOREIGN && marker.url && isLiveWriter(marker, marker) ? marker : null;
}

const previewRunning = (dir: string, url: string, other: Marker) =>
  new CitiesApiError(
    `${dir} is the site of another preview, running at ${other.url} (pid ${other.pid}): this one would rewrite its links to ${url}. ` +
      `Stop that one, or preview into another directory (${optionNamed('site')}) (nothing was written)`,
    2,
  );

/**
 * The preview a marker file names, and when it was written; null when there is none; FOREIGN
 * when what has its name is no marker. An empty one is no one's (an older version, killed as it wrote it).
 */
async function markerIn(file: string): Promise<Marker | typeof FOREIGN | null> {
  try {
    // Read through one descriptor: the text and the mtime of one file.
    const handle = await open(file, 'r');
    try {
      const text = await handle.readFile('utf8');
      const { mtimeMs } = await handle.stat();
      if (text.trim() === '') return { pid: 0, url: '', mtimeMs };
      const marker = JSON.parse(text) as Partial<Marker>;
      const token = typeof marker.token === 'string' ? marker.token : undefined;
      if (typeof marker.pid !== 'number' || typeof marker.url !== 'string') return FOREIGN;
      return { pid: marker.pid, url: marker.url, ...(token && { token }), mtimeMs };
    } finally {
      await handle.close();
    }
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : FOREIGN;
  }
}
