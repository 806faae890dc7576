import { access, lstat, readlink } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CitiesApiError } from '../core/errors.js';
import { errnoAdvice, errnoWords } from './errno-words.js';
import { exists } from './file-output.js';

export { errnoAdvice } from './errno-words.js';

// A failure of the file system (no such file, no permission, a file where a directory should
// be...) said as one line: the path at fault (the directory a file could not be created in, not
// the file) and what to do. Every errno that reaches the CLI goes through here.

/** What a path was for, and how the user chooses another: `{ what: 'dataset', option: '--data' }`. */
export interface PathRole {
  readonly what: string;
  readonly option?: string;
  /** Said after the advice when the path does not exist (e.g. where a sample dataset is). */
  readonly missingHint?: string;
  /** Said last, e.g. that nothing was changed. */
  readonly note?: string;
}

type Errno = NodeJS.ErrnoException & { path?: string; dest?: string };

/** Whether a value is an error from the operating system (`code` and `syscall` set by Node). */
export function isErrno(error: unknown): error is Errno {
  // Node's own code for one it wraps (fs.rm of a directory: ERR_FS_EISDIR, its `info` EISDIR) set back to that errno.
  const wrapped = error instanceof Error && /^ERR_FS_E/.test(String((error as Errno).code));
  if (wrapped) (error as Errno).code = (error as { info?: Errno }).info?.code ?? (error as Errno).code;
  return (
    error instanceof Error &&
    typeof (error as Errno).code === 'string' &&
    /^E[A-Z0-9]+$/.test((error as Errno).code!) &&
    typeof (error as Errno).syscall === 'string'
  );
}

/** A rename's or an exclusive copy's errors that its target is at fault for (something where the file goes). */
const TARGET_AT_FAULT = new Set(['rename EISDIR', 'rename ENOTEMPTY', 'copyfile EEXIST']);

/** System calls that create or remove an entry: a permission error there is the directory's. */
const ENTRY_CALLS = new Set(['mkdir', 'link', 'rename', 'symlink', 'unlink', 'rmdir', 'mkdtemp']);

/** The first of `path` and its parents that exists and is not a directory, if any. */
async function fileInTheWay(path: string): Promise<string | undefined> {
  for (let at = path; ; at = dirname(at)) {
    const info = await lstat(at).catch(() => null);
    if (info) return info.isDirectory() ? undefined : at;
    if (dirname(at) === at) return undefined;
  }
}

/** Whether this user may use `path` as `mode` says (constants.R_OK...). */
const can = (path: string, mode: number) =>
  access(path, mode).then(
    () => true,
    () => false,
  );

/** The outermost parent of `path` that cannot be searched (no x permission), if any. */
async function closedParent(path: string): Promise<string | undefined> {
  const parents: string[] = [];
  for (let at = dirname(path); ; at = dirname(at)) {
    parents.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const dir of parents) if (!(await can(dir, constants.X_OK))) return dir;
  return undefined;
}

/** `error` (an errno's) naming `path` when it names none (a read of a directory: EISDIR, no path, else said of the caller's directory). */
export function withPath(error: unknown, path: string): unknown {
  if (isErrno(error) && error.path === undefined) error.path = path;
  return error;
}

/**
 * An errno that names no path, when the caller names none either (a write to a handle): the
 * system call, the system's words and what to do; no path made up (it named the working directory).
 */
function unnamedError(error: Errno, note?: string): CitiesApiError {
  const said = error.message.replace(`${error.code}: `, '').replace(new RegExp(`, ${error.syscall}$`), '');
  const advice = errnoAdvice(error.code) ?? 'check the files and directories the command uses, then try again';
  return new CitiesApiError(
    `${error.syscall}() failed: ${said} (the system named no file); ${advice} (${error.code}${note ? `; ${note}` : ''})`,
    1,
  );
}

/**
 * A CitiesApiError (exit 1) for an errno error, naming the path at fault and what to do; any
 * other error is returned as it is. `fallback` is the path the caller was working on, for errors
 * that carry none (with neither, the message says no file was named); `shownAs`, how messages name
 * it (the path as the user gave it; default: absolute).
 */
export async function fileSystemError(
  error: unknown,
  role: PathRole,
  fallback?: string,
  shownAs?: string,
): Promise<unknown> {
  if (!isErrno(error)) return error;
  if (error.path === undefined && fallback === undefined) return unnamedError(error, role.note);
  // The path at fault (a lock file, a page, a rename's or a copy's target in the way...), and the one the user named, said as the subject.
  const inTheWay = TARGET_AT_FAULT.has(`${error.syscall} ${error.code}`) ? error.dest : undefined;
  const path = resolve(inTheWay ?? error.path ?? fallback!);
  const target = resolve(fallback ?? path);
  const subject = shownAs ?? target;
  const at = path === target ? `the ${role.what} ${subject}` : `${path} (of the ${role.what} ${subject})`;
  const choose = role.option ? `, or choose another with ${role.option}` : '';
  const [words, advice] = [errnoWords(error.code), errnoAdvice(error.code)];
  const fail = (message: string) =>
    new CitiesApiError(`${message} (${error.code}${role.note ? `; ${role.note}` : ''})`, 1);
  switch (error.code) {
    case 'ENOENT': {
      const way = await fileInTheWay(dirname(path));
      const link = await readlink(target).catch(() => undefined);
      if (link !== undefined)
        return fail(
          `the ${role.what} ${subject} is a symbolic link to ${link}, which does not exist; fix the link${choose}`,
        );
      if (way)
        return fail(
          `the ${role.what} ${subject} cannot be used: ${way} is a file, not a directory; move it away${choose}`,
        );
      return fail(
        `the ${role.what} ${subject} does not exist; check the path${choose}${role.missingHint ? `; ${role.missingHint}` : ''}`,
      );
    }
    case 'ENOTDIR':
    case 'EEXIST': {
      // A copy's target there already: a directory (or a planted file) where cities-api's draft goes.
      if (inTheWay) return fail(`${at} is in the way of a file written there; move it aside or delete it`);
      const way = (await fileInTheWay(error.code === 'EEXIST' ? path : dirname(path))) ?? path;
      return fail(
        `the ${role.what} ${subject} cannot be used: ${way} is a file, not a directory; move it away${choose}`,
      );
    }
    case 'EISDIR':
      // The path given (by an option) is a directory, or one of cities-api's files in or beside it (a manifest, a record, a lock) is.
      return fail(
        path === target && role.option
          ? `${at} is a directory; give the path of a file${choose}`
          : `${at} is a directory where a file belongs; move it aside or delete it`,
      );
    case 'EACCES':
    case 'EPERM': {
      const closed = await closedParent(path);
      if (closed)
        return fail(
          `permission denied: cannot enter ${closed} (for the ${role.what} ${subject}); give this user access to it (chmod/chown)${choose}`,
        );
      // A copy is refused either the file it reads or the directory it writes in.
      if (error.syscall === 'copyfile' && !(await can(path, constants.R_OK)))
        return fail(`permission denied: cannot read ${at}; give this user read access to it (chmod/chown)${choose}`);
      if (error.syscall === 'copyfile' && error.dest)
        return fail(
          `permission denied: cannot write in ${dirname(resolve(error.dest))} (for the ${role.what} ${subject}); make that directory writable for this user${choose}`,
        );
      const inDir = ENTRY_CALLS.has(error.syscall!) || !(await exists(path));
      if (inDir)
        return fail(
          `permission denied: cannot write in ${dirname(path)} (for the ${role.what} ${subject}); make that directory writable for this user${choose}`,
        );
      return fail(
        `permission denied: cannot ${error.syscall === 'open' ? 'open' : 'use'} ${at}; give this user access to it (chmod/chown)${choose}`,
      );
    }
    case 'EROFS':
      return fail(`cannot write ${at}: it is on a ${words}${choose || '; choose a writable place'}`);
    case 'ELOOP':
      return fail(
        `the ${role.what} ${subject} cannot be used: too many symbolic links (a loop?); fix the links${choose}`,
      );
    case 'ENAMETOOLONG':
      return fail(`the ${role.what} ${subject} cannot be used: the name is too long${choose}`);
    case 'ENOSPC':
      return fail(`${words} for the ${role.what} ${subject}: ${advice}`);
    case 'EDQUOT':
      return fail(`${words} for the ${role.what} ${subject}: ${advice}`);
    case 'EIO':
      return fail(`${words} on ${at}: ${advice}`);
    case 'EMFILE':
    case 'ENFILE':
      return fail(`${words} while using the ${role.what} ${subject}: ${advice}`);
    default:
      return fail(`the ${role.what} ${subject} cannot be used: ${error.message}`);
  }
}
