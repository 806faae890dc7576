import { link, rename, rm } from 'node:fs/promises';
import { type DraftName, newDraft, removeDeadDrafts } from './dead-drafts.js';
import { exists } from './file-output.js';

// A file written whole or not at all, through a draft of its writer's: renamed over the file it
// replaces, or linked where nothing has its name yet.

/** Writes the writer's draft, given its path. */
type WriteDraft = (draft: string) => Promise<unknown>;

/**
 * Writes a file through a temporary one: `write` makes the writer's draft (named by `drafts`),
 * which is then renamed over `path`. On failure the draft is removed (half-written on a full disk,
 * it would hold the space it took) and `path` is left as it was.
 */
export function replaceThrough(drafts: DraftName, path: string, write: WriteDraft): Promise<void> {
  return throughDraft(drafts, write, (draft) => rename(draft, path));
}

/**
 * Creates a file that must not exist, whole or not at all: `write` makes the writer's draft,
 * which is then linked at `path`, never replacing what has that name (made meanwhile, say): false
 * then, and nothing written. On failure, as on success, the draft is removed: nothing is left at `path`.
 */
export async function createThrough(drafts: DraftName, path: string, write: WriteDraft): Promise<boolean> {
  let created = true;
  await throughDraft(drafts, write, async (draft) => {
    created = await linkNew(draft, path);
    await rm(draft, { force: true });
  });
  return created;
}

/** Where hard links are refused (FAT, some network file systems), though the directory is writable. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'ENOSYS']);

/** `from` linked at `path` (false when something has that name); renamed there if links are refused and nothing does. */
async function linkNew(from: string, path: string): Promise<boolean> {
  try {
    await link(from, path);
    return true;
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'EEXIST') return false;
    if (!NO_LINKS.has(code!)) throw error;
  }
  if (await exists(path)) return false;
  await rename(from, path);
  return true;
}

/**
 * `write` makes the writer's draft, `place` puts it where it goes; on failure the draft is
 * removed. First the drafts of writers killed before they placed theirs (see dead-drafts.ts).
 * The draft is in use (no other writer removes it) until it is placed or removed.
 */
async function throughDraft(
  drafts: DraftName,
  write: WriteDraft,
  place: (draft: string) => Promise<void>,
): Promise<void> {
  await removeDeadDrafts([drafts]);
  const draft = newDraft(drafts);
  try {
    await write(draft.path);
    await place(draft.path);
  } catch (error) {
    await rm(draft.path, { force: true }).catch(() => undefined);
    throw error;
  } finally {
    draft.done();
  }
}
