import { lstat, readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isOther } from './lock-holder.js';
import { removeTree } from './remove-tree.js';

// A file (or a site's tree) is written whole through a draft beside it, named with its writer's
// pid, then renamed or linked into place. A writer killed in between (SIGKILL, a power loss) left
// its draft for good: no later run has its pid, and each removed only its own. Each writer names
// its drafts with a DraftName and, as it writes, removes those of that name whose writer is gone.

/** The drafts of one kind: in `dir`, `head` + the writer's pid + `tail`. */
export interface DraftName {
  readonly dir: string;
  readonly head: string;
  readonly tail: string;
  /** A directory tree (a build's staging site), else a file: a directory of its name is not ours. */
  readonly tree: boolean;
}

/** Drafts named `${before}${pid}${tail}` (`before` a path: the directory and the name's head). */
export function draftName(before: string, tail = '', tree = false): DraftName {
  return { dir: dirname(before), head: basename(before), tail, tree };
}

/** The path of this process's draft (or `pid`'s). */
export function draftOf(name: DraftName, pid = process.pid): string {
  return join(name.dir, `${name.head}${pid}${name.tail}`);
}

/** No system gives a larger pid (Linux's PID_MAX_LIMIT; macOS's and the BSDs' stay under 100,000). */
const MAX_PID = 2 ** 22;

/**
 * The pid in `entry` if it is a name `name` gives, else null: a name only alike is a user's
 * (`.x.draft`, `.x.12ab.draft`, `.x.007.draft`, a dated copy `.cities.csv.bak-20240101`).
 */
function writerOf(name: DraftName, entry: string): number | null {
  if (!entry.startsWith(name.head) || !entry.endsWith(name.tail)) return null;
  const pid = entry.slice(name.head.length, entry.length - name.tail.length);
  return /^[1-9]\d{0,6}$/.test(pid) && Number(pid) <= MAX_PID ? Number(pid) : null;
}

/**
 * The drafts of these names whose writer is gone, sorted by path: its pid names no live process
 * but this one (none, a thread's id, or this process's own: a dead writer's pid reused, as
 * lock-holder.ts tells a lock's holder). A live writer's are left alone, and so is every entry
 * whose name the writer would not give (another file's drafts, a user's look-alike). A directory
 * that cannot be read (gone, not ours to read) has none.
 */
export async function deadDrafts(names: readonly DraftName[]): Promise<{ path: string; name: DraftName }[]> {
  const found: { path: string; name: DraftName }[] = [];
  for (const dir of new Set(names.map((name) => name.dir))) {
    const entries = await readdir(dir).catch(() => []);
    for (const name of names.filter((name) => name.dir === dir))
      for (const entry of entries) {
        const pid = writerOf(name, entry);
        if (pid !== null && !isOther(pid)) found.push({ path: join(dir, entry), name });
      }
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Removes the drafts of these names whose writer is gone (see deadDrafts). */
export async function removeDeadDrafts(names: readonly DraftName[]): Promise<void> {
  for (const { path, name } of await deadDrafts(names)) await removeDraft(path, name);
}

/**
 * Removes one dead writer's draft, never through a link: a link of its name is unlinked itself,
 * what it points to left alone. What cannot be removed (permissions, gone meanwhile) stays: it is
 * in no writer's way (each writes its own pid's), and the next run tries again.
 */
export async function removeDraft(path: string, name: DraftName): Promise<void> {
  if (name.tree) return removeTree(path).catch(() => undefined);
  const stats = await lstat(path).catch(() => null);
  if (stats && !stats.isDirectory()) await unlink(path).catch(() => undefined);
}
