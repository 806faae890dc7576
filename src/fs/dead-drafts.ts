import { lstat, readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isLiveWriter } from './lock-holder.js';
import { dropToken, newToken } from './lock-tokens.js';

// A file is written whole through a draft beside it, then renamed or linked into place. A writer
// killed in between (SIGKILL, a power loss) left its draft for good. Each writer names its drafts
// with a DraftName and, as it writes, removes those of that name whose writer is gone. A draft's
// name holds its writer's pid and token (lock-tokens.ts): the threads of a process share its pid,
// so the token tells whether a writer in this process still has it, and a token this process's
// table does not know, the draft's mtime (process-start.ts).

/** The drafts of one kind: in `dir`, `head` + the writer's pid, a dot and its token + `tail`. */
export interface DraftName {
  readonly dir: string;
  readonly head: string;
  readonly tail: string;
  /** Swept whatever one extension (or none) ends them, not only `tail`: a dataset's are named with its path's (dataset-temp.ts). */
  readonly anyExtension?: boolean;
}

/** Drafts named `${before}${pid}.${token}${tail}` (`before` a path: the directory and the name's head). */
export function draftName(before: string, tail = '', anyExtension = false): DraftName {
  return { dir: dirname(before), head: basename(before), tail, ...(anyExtension && { anyExtension }) };
}

/** A new draft of this thread's: its path, in use until `done()` (call it once the draft is placed or removed). */
export function newDraft(name: DraftName): { path: string; done: () => void } {
  const token = newToken();
  return { path: join(name.dir, `${name.head}${process.pid}.${token}${name.tail}`), done: () => dropToken(token) };
}

/** No system gives a larger pid (Linux's PID_MAX_LIMIT; macOS's and the BSDs' stay under 100,000). */
const MAX_PID = 2 ** 22;

/**
 * The writer named in `entry` if it is a name `name` gives, else null: a name only alike is a
 * user's (`.x.draft`, `.x.12ab.draft`, `.x.007.draft`, a dated copy `.cities.csv.bak-20240101`).
 * A token is a process's tag (base 36) and a number (lock-tokens.ts); a name of the pid alone is
 * an older version's.
 */
function writerOf(name: DraftName, entry: string): { pid: number; token?: string } | null {
  if (!entry.startsWith(name.head)) return null;
  // A token has one dot and a pid none: each name is read one way at most.
  for (const tail of name.anyExtension ? ['', /\.[^.]*$/.exec(entry)?.[0] ?? ''] : [name.tail]) {
    if (!entry.endsWith(tail) || entry.length - tail.length < name.head.length) continue;
    const writer = entry.slice(name.head.length, entry.length - tail.length);
    const [, pid, token] = /^([1-9]\d{0,6})(?:\.([0-9a-z]{1,6}\.[1-9]\d{0,9}))?$/.exec(writer) ?? [];
    if (pid && Number(pid) <= MAX_PID) return { pid: Number(pid), ...(token && { token }) };
  }
  return null;
}

/**
 * The drafts of these names whose writer is gone (isLiveWriter: lock-holder.ts), sorted by path. A live writer's are
 * left alone, and so is every entry whose name the writer would not give (another file's drafts, a
 * user's look-alike) or a file's draft name that is a directory. A directory that cannot be read
 * (gone, not ours to read) has none.
 */
export async function deadDrafts(names: readonly DraftName[]): Promise<{ path: string; name: DraftName }[]> {
  const found: { path: string; name: DraftName }[] = [];
  for (const dir of new Set(names.map((name) => name.dir))) {
    const entries = await readdir(dir).catch(() => []);
    for (const name of names.filter((name) => name.dir === dir))
      for (const entry of entries) {
        const writer = writerOf(name, entry);
        if (!writer) continue;
        // A draft is a file: a directory of its name is someone's (lstat: a link's name is the draft's).
        const stats = await lstat(join(dir, entry)).catch(() => null);
        if (stats && !stats.isDirectory() && !isLiveWriter(writer, stats)) found.push({ path: join(dir, entry), name });
      }
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Removes the drafts of these names whose writer is gone (see deadDrafts). */
export async function removeDeadDrafts(names: readonly DraftName[]): Promise<void> {
  for (const { path } of await deadDrafts(names)) await removeDraft(path);
}

/**
 * Removes one dead writer's draft, never through a link: a link of its name is unlinked itself,
 * what it points to left alone. What cannot be removed (permissions, gone meanwhile) stays: it is
 * in no writer's way (each writes a name of its own token), and the next run tries again.
 */
export async function removeDraft(path: string): Promise<void> {
  const stats = await lstat(path).catch(() => null);
  if (stats && !stats.isDirectory()) await unlink(path).catch(() => undefined);
}
