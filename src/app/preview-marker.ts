import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import { isAlive } from '../fs/lock-holder.js';
import { siteSiblings } from '../fs/lock.js';
import { resolveSiteDir } from '../store/site-path.js';

// A preview (serve --data without --base-url) builds its site with links on its own URL, so two
// previews of one directory would rewrite each other's links: the first would serve pages
// linking to the second, dead once it stops. A preview says it is running in `.NAME.preview`
// beside the site (its pid and URL); another one, on another URL, is refused while it runs.

interface Marker {
  readonly pid: number;
  readonly url: string;
}

/** Previews running in this process, by marker file: their URLs (a library may start several). */
const running = new Map<string, string>();

/**
 * Marks the site directory `dir` as previewed at `url` by this process, or refuses (exit 2,
 * nothing written) when another preview, still running, serves it at another URL. Returns the
 * unmarking. A marker that cannot be written (a read-only parent) is left unwritten.
 */
export async function markPreview(dir: string, url: string): Promise<() => Promise<void>> {
  const { parent, prefix } = siteSiblings(await resolveSiteDir(dir));
  const file = join(parent, `${prefix}preview`);
  const other = running.has(file) ? { pid: process.pid, url: running.get(file)! } : await markerIn(file);
  if (other && other.url !== url && (other.pid === process.pid ? running.has(file) : isAlive(other.pid)))
    throw new CitiesApiError(
      `${dir} is the site of another preview, running at ${other.url} (pid ${other.pid}): this one would rewrite its links to ${url}. ` +
        `Stop that one, or preview into another directory (${optionNamed('site')}) (nothing was written)`,
      2,
    );
  running.set(file, url);
  await writeFile(file, `${JSON.stringify({ pid: process.pid, url })}\n`).catch(() => undefined);
  return async () => {
    if (running.get(file) !== url) return;
    running.delete(file);
    if ((await markerIn(file))?.pid === process.pid) await rm(file, { force: true }).catch(() => undefined);
  };
}

/** The preview a marker file names, or null (none, or unreadable). */
async function markerIn(file: string): Promise<Marker | null> {
  try {
    const marker = JSON.parse(await readFile(file, 'utf8')) as Partial<Marker>;
    return typeof marker.pid === 'number' && typeof marker.url === 'string' ? (marker as Marker) : null;
  } catch {
    return null;
  }
}
