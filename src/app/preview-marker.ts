import { open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import { isLiveWriter } from '../fs/lock-holder.js';
import { dropToken, newToken } from '../fs/lock-tokens.js';
import { siteSiblings } from '../fs/lock.js';
import { resolveSiteDir } from '../store/site-path.js';

// A preview (serve --data without --base-url) builds its site with links on its own URL, so two
// previews of one directory would rewrite each other's links: the first would serve pages
// linking to the second, dead once it stops. A preview says it is running in `.NAME.preview`
// beside the site (its pid, a token of this process's holders' table and its URL); another one,
// on another URL, is refused while it runs. The threads of a process share its pid: the token
// tells whether a preview of this pid still runs, in whichever thread (lock-tokens.ts).

interface Marker {
  readonly pid: number;
  readonly url: string;
  /** Absent in a marker an older version wrote. */
  readonly token?: string;
  readonly mtimeMs: number;
}

/**
 * Marks the site directory `dir` as previewed at `url` by this thread, or refuses (exit 2,
 * nothing written) when another preview, still running, serves it at another URL. Returns the
 * unmarking. A marker that cannot be written (a read-only parent) is left unwritten.
 */
export async function markPreview(dir: string, url: string): Promise<() => Promise<void>> {
  const { parent, prefix } = siteSiblings(await resolveSiteDir(dir));
  const file = join(parent, `${prefix}preview`);
  const other = await markerIn(file);
  if (other && other.url !== url && isLiveWriter(other, other))
    throw new CitiesApiError(
      `${dir} is the site of another preview, running at ${other.url} (pid ${other.pid}): this one would rewrite its links to ${url}. ` +
        `Stop that one, or preview into another directory (${optionNamed('site')}) (nothing was written)`,
      2,
    );
  const token = newToken();
  await writeFile(file, `${JSON.stringify({ pid: process.pid, url, token })}\n`).catch(() => undefined);
  let held = true;
  return async () => {
    if (!held) return;
    held = false;
    dropToken(token);
    if ((await markerIn(file))?.token === token) await rm(file, { force: true }).catch(() => undefined);
  };
}

/** The preview a marker file names, and when it was written; or null (none, or unreadable). */
async function markerIn(file: string): Promise<Marker | null> {
  try {
    // Read through one descriptor: the text and the mtime of one file.
    const handle = await open(file, 'r');
    try {
      const marker = JSON.parse(await handle.readFile('utf8')) as Partial<Marker>;
      const { mtimeMs } = await handle.stat();
      const token = typeof marker.token === 'string' ? marker.token : undefined;
      if (typeof marker.pid !== 'number' || typeof marker.url !== 'string') return null;
      return { pid: marker.pid, url: marker.url, ...(token && { token }), mtimeMs };
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}
