import { lstat, mkdir, readFile, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { CitiesApiError } from '../core/errors.js';
import { type DraftName, draftName, removeDeadDrafts } from './dead-drafts.js';
import { sha256, writeNew } from './file-output.js';
import { createThrough, replaceThrough } from './through-draft.js';
import { withPath } from './fs-error.js';

// Files a command writes into a directory the user owns (a project folder, often their repository's
// root): it replaces only files it wrote itself and nobody changed since, known by a record of their
// hashes kept beside them. Anything else with one of their names (the user's own netlify.toml, an
// edited worker.js, a link, a folder) is left as it is and the command refuses, writing nothing.

export interface OwnedFile {
  /** Absolute path. */
  readonly path: string;
  readonly bytes: Uint8Array;
  /** Other contents known as ours (what a build writes there), replaced like a recorded one. */
  readonly alsoOurs?: readonly (string | Uint8Array)[];
}

interface OwnedRecord {
  readonly generator: string;
  /** Path (relative to the record's folder, `/`-separated) → hashes of contents we wrote there. */
  readonly files: Record<string, string[]>;
}

/** Writes `files`, each atomically, after checking that none would replace something not ours; the record is `dir/recordName`. */
export async function writeOwnedFiles(
  dir: string,
  recordName: string,
  generator: string,
  files: readonly OwnedFile[],
): Promise<void> {
  const recordPath = join(dir, recordName);
  const record = await readRecord(recordPath, generator);
  const key = (path: string) => relative(dir, path).split(sep).join('/');
  // Each new content hashed once (a Lambda zip holds the site's edge data: tens of MB).
  const hashes = files.map((file) => sha256(file.bytes));
  const conflicts: string[] = [];
  for (const file of files) {
    const link = await linkedParent(dir, file.path);
    if (link)
      conflicts.push(
        `${file.path} is under ${link}, a symbolic link out of ${dir} (it would be written where it points)`,
      );
  }
  for (const [i, file] of files.entries()) {
    const why = await notOurs(file, hashes[i]!, record.files[key(file.path)] ?? [], generator);
    if (why) conflicts.push(`${file.path} ${why}`);
  }
  if (conflicts.length > 0) {
    throw new CitiesApiError(
      `nothing was written: ${conflicts.join('; ')}. ${generator} replaces only files it wrote itself: move these aside or delete them, then run again (your settings can then be merged into the new files)`,
      2,
    );
  }
  // Until every file is in place, the record accepts both their old and new contents: a run cut short is not mistaken for the user's edit.
  const during: Record<string, string[]> = { ...record.files };
  for (const [i, file] of files.entries())
    during[key(file.path)] = [...new Set([...(record.files[key(file.path)] ?? []), hashes[i]!])];
  await mkdir(dir, { recursive: true });
  await writeAtomically(recordPath, recordText(generator, during));
  for (const file of files) {
    await mkdir(dirname(file.path), { recursive: true });
    await writeAtomically(file.path, file.bytes);
  }
  const after: Record<string, string[]> = { ...record.files };
  for (const [i, file] of files.entries()) after[key(file.path)] = [hashes[i]!];
  await writeAtomically(recordPath, recordText(generator, after));
}

/** The first directory between `dir` and `path` (when `path` is inside `dir`) that is a symbolic link to outside `dir`, if any. */
async function linkedParent(dir: string, path: string): Promise<string | null> {
  const rel = relative(dir, path);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  const root = await realpath(dir).catch(() => dir);
  const parts = rel.split(sep).slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const at = join(dir, ...parts.slice(0, i));
    const stats = await lstat(at).catch(() => null);
    if (!stats) return null;
    if (!stats.isSymbolicLink()) continue;
    const target = relative(root, await realpath(at).catch(() => at));
    if (target === '..' || target.startsWith(`..${sep}`) || isAbsolute(target)) return at;
  }
  return null;
}

/** Why `file` must not be replaced, or null when it may be. */
async function notOurs(
  file: OwnedFile,
  newHash: string,
  recorded: readonly string[],
  generator: string,
): Promise<string | null> {
  const stats = await lstat(file.path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!stats) return null;
  if (stats.isSymbolicLink()) return 'is a symbolic link';
  if (!stats.isFile()) return 'is not a file';
  const hash = sha256(await readFile(file.path));
  const ours = [newHash, ...(file.alsoOurs ?? []).map((bytes) => sha256(bytes))];
  return recorded.includes(hash) || ours.includes(hash)
    ? null
    : `exists and was not written by ${generator} (or was changed since)`;
}

async function readRecord(path: string, generator: string): Promise<OwnedRecord> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw withPath(error, path);
  });
  if (text === null) return { generator, files: {} };
  try {
    const parsed = JSON.parse(text) as OwnedRecord;
    if (parsed.generator === generator && parsed.files && typeof parsed.files === 'object') {
      const files = Object.fromEntries(Object.entries(parsed.files).filter(([, hashes]) => Array.isArray(hashes)));
      return { generator, files };
    }
  } catch {
    // reported below
  }
  throw new CitiesApiError(
    `${path} is not a record ${generator} wrote: move it aside or delete it (with it, files this folder holds are no longer known as ${generator}'s), then run again`,
    2,
  );
}

function recordText(generator: string, files: Record<string, string[]>): string {
  const sorted = Object.fromEntries(
    Object.keys(files)
      .sort()
      .map((path) => [path, files[path]!]),
  );
  return `${JSON.stringify({ generator, files: sorted }, null, 2)}\n`;
}

/**
 * Writes a new file beside `path` and renames it over: `path` is never half-written, and a link
 * with its name is replaced, not written through. A draft that fails (a full disk) is removed.
 */
async function writeAtomically(path: string, bytes: string | Uint8Array): Promise<void> {
  await replaceThrough(draftsOf(path), path, (draft) => writeNew(draft, bytes));
}

/**
 * Creates `path` (one of the user's files, written once when missing) whole or not at all: a write
 * that fails (a full disk) leaves nothing that a next run would take for the user's file and keep.
 * False when something has its name by then (nothing written).
 */
export async function createAtomically(path: string, bytes: string | Uint8Array): Promise<boolean> {
  return createThrough(draftsOf(path), path, (draft) => writeNew(draft, bytes));
}

/**
 * Removes the drafts that killed runs left of these files (`.NAME.PID.TOKEN.draft`, their writer gone),
 * whether this run writes the files or not: a file written only when missing, which the user then
 * made themselves, is never written again, and the draft of its name would otherwise stay for good.
 */
export async function removeDeadDraftsOf(paths: readonly string[]): Promise<void> {
  await removeDeadDrafts(paths.map(draftsOf));
}

/** The temporary files beside `path` that become it: `.NAME.PID.TOKEN.draft` (dead-drafts.ts). */
function draftsOf(path: string): DraftName {
  return draftName(join(dirname(path), `.${basename(path)}.`), '.draft');
}
