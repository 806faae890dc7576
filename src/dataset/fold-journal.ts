import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { draftName } from '../fs/dead-drafts.js';
import { fileSystemError, withPath } from '../fs/fs-error.js';
import { DATASET_SIDE_ROLE } from '../fs/lock.js';
import { commitStaged, type StagedDataset } from './append-cities.js';
import { replaceThrough } from '../fs/through-draft.js';

// What the folds of a dataset's log did to its file, `.NAME.folds` beside it: one line a fold,
// appended holding the dataset's lock right after its commit. A build that read the file before a
// fold (another site's writable server folding what it logged) can then tell, at its swap, that
// the file it meets is the one it read plus cities that were logged: grown, not moved (as-read.ts).
// Nothing else is ever read from it: a line lost or torn (a crash) breaks the chain, and the
// build's swap is refused as it was without one.

/**
 * One fold: the file's signature before (the one its commit checked) and after, how many cities it
 * appended, and the log's head it dropped (its whole records: their bytes and digest, as-read.ts).
 */
export interface Fold {
  readonly from: string;
  readonly to: string;
  readonly cities: number;
  readonly log: { readonly bytes: number; readonly digest: string };
}

/** Folds kept: a build that read the file more folds ago than this is refused (built again) as before. */
const KEPT = 64;

/** The journal of the dataset whose real file is `target`. */
const journalOf = (target: string) => join(dirname(target), `.${basename(target)}.folds`);

/** Commits a fold's staged dataset (commitStaged) and records it; what it moved: the cities appended, the log's head dropped after. */
export async function commitFold(staged: StagedDataset, moved: Omit<Fold, 'from' | 'to'>): Promise<string> {
  const committed = await commitStaged(staged);
  // '': the file in place is no longer the one staged (changed by someone else since): no chain goes through it.
  if (committed) await recordFold(staged.target, { from: staged.signature, ...moved }, committed);
  return committed;
}

/**
 * Records a fold just committed (`to`: the file's signature its commit left), holding the dataset's lock. The
 * journal is cut back to its last KEPT folds once it holds twice as many (rewritten through a
 * draft). Never fails the fold: a fold not recorded only refuses the swaps a record would let in.
 */
export async function recordFold(target: string, fold: Omit<Fold, 'to'>, to: string): Promise<void> {
  const path = journalOf(target);
  try {
    const line = `${JSON.stringify({ ...fold, to })}\n`;
    const kept = (await journalLines(target)).slice(1 - KEPT * 2);
    if (kept.length < KEPT * 2 - 1) return await appendLine(path, line);
    await replaceThrough(draftName(`${path}.tmp-`), path, async (draft) => {
      const handle = await open(draft, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
      try {
        await handle.writeFile(`${kept.slice(1 - KEPT).join('\n')}\n${line}`);
      } finally {
        await handle.close();
      }
    });
  } catch {}
}

/** `line` appended to the journal, never through a link planted in its place (O_NOFOLLOW): a file it names is not ours. */
async function appendLine(path: string, line: string): Promise<void> {
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    await handle.write(line);
  } finally {
    await handle.close();
  }
}

/**
 * The folds that took the file from signature `from` to signature `now`, in order, or null when
 * no chain of recorded folds does (the file edited or replaced otherwise, or not recorded).
 * To be called holding the dataset's lock.
 */
export async function foldsBetween(target: string, from: string, now: string): Promise<Fold[] | null> {
  const folds: Fold[] = [];
  let at = from;
  for (const line of await journalLines(target)) {
    const fold = foldIn(line);
    if (fold?.from !== at) continue;
    folds.push(fold);
    at = fold.to;
  }
  return at === now && folds.length ? folds : null;
}

/** The journal's whole lines (none when there is none); one it cannot read said as the dataset's (a build's caller names its site). */
async function journalLines(target: string): Promise<string[]> {
  const path = journalOf(target);
  const text = await readFile(path, 'utf8').catch(async (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw await fileSystemError(withPath(error, path), DATASET_SIDE_ROLE, target);
  });
  return text.split('\n').slice(0, -1);
}

/** A line's fold, or null (torn, or not one). */
function foldIn(line: string): Fold | null {
  try {
    const fold = JSON.parse(line) as Partial<Fold>;
    const { from, to, cities, log } = fold;
    const valid =
      typeof from === 'string' &&
      typeof to === 'string' &&
      Number.isSafeInteger(cities) &&
      Number.isSafeInteger(log?.bytes) &&
      typeof log?.digest === 'string';
    return valid ? (fold as Fold) : null;
  } catch {
    return null;
  }
}
