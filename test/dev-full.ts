import type * as Fs from 'node:fs';
import type * as FsPromises from 'node:fs/promises';

// A full disk, as /dev/full makes one, for a test's vi.mock of node:fs and node:fs/promises: a path
// listed in `full` opened for writing is created (or truncated) as its flags say, as a full disk
// still does, and what is written to it goes to /dev/full instead, whose writes fail with ENOSPC and
// no path (as write, fsync and ftruncate on a file handle do). /dev/full itself is only opened and
// written: a handle to it refuses to change its mode, owner or size, and nothing removes it (the
// tests may run as root). A copy to such a path (copyFile) fails with ENOSPC naming both files, and
// leaves no file, as libuv's does on a full disk. And a file system that refuses a path listed in `refused` (read-only,
// no permission), written whole (writeFile): the error Node throws, with the path; as root no chmod
// makes one. Only types are imported here: the modules are the ones being mocked.
//
//   const faults = vi.hoisted(() => ({ full: new Set<string>(), refused: new Map() }));
//   vi.mock('node:fs', async (original) => (await import('./dev-full.js')).faultyFs(await original(), faults));

export const DEV_FULL = '/dev/full';

export interface DiskFaults {
  /** Paths whose writes fail with ENOSPC (as they are, or patterns: see listed). */
  readonly full: ReadonlySet<string>;
  /** Paths the file system refuses to write. */
  readonly refused?: ReadonlyMap<string, 'EACCES' | 'EROFS'>;
}

/**
 * Whether `path` matches `pattern`: the same path, or one where each `*` of the pattern stands for
 * any characters but `/` (a draft's name holds its writer's token, which no test knows ahead:
 * `.x.${process.pid}.*.draft`).
 */
export function matches(pattern: string, path: string): boolean {
  if (!pattern.includes('*')) return pattern === path;
  const escaped = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^/]*')}$`).test(path);
}

/** Whether `path` is one of `paths` (matches). */
const listed = (paths: ReadonlySet<string>, path: unknown) => [...paths].some((entry) => matches(entry, String(path)));

/** The error Node throws when the system refuses to open `path` for writing. */
function refusal(code: 'EACCES' | 'EROFS', path: unknown): Error {
  return Object.assign(
    new Error(`${code}: ${code === 'EACCES' ? 'permission denied' : 'read-only file system'}, open '${path}'`),
    { errno: code === 'EACCES' ? -13 : -30, code, syscall: 'open', path: String(path) },
  );
}

/** Whether open flags (a string or O_ bits) open for writing. */
function writes(flags: unknown): boolean {
  return typeof flags === 'number' ? (flags & 3) !== 0 : /[wa+]/.test(String(flags ?? 'r'));
}

function refuse({ refused }: DiskFaults, path: unknown): void {
  const code = refused?.get(String(path));
  if (code) throw refusal(code, path);
}

/** node:fs with `faults`: openSync and writeFileSync. */
export function faultyFs(fs: typeof Fs, faults: DiskFaults): Record<string, unknown> {
  const { full } = faults;
  const openSync = ((path: Fs.PathLike, flags?: Fs.OpenMode, mode?: Fs.Mode) => {
    if (writes(flags)) refuse(faults, path);
    if (!listed(full, path) || !writes(flags)) return fs.openSync(path, flags ?? 'r', mode);
    fs.closeSync(fs.openSync(path, flags!, mode));
    return fs.openSync(DEV_FULL, 'w');
  }) as typeof fs.openSync;
  const writeFileSync: typeof fs.writeFileSync = (path, data, options) => {
    refuse(faults, path);
    if (!listed(full, path)) return fs.writeFileSync(path, data, options);
    fs.closeSync(fs.openSync(path as Fs.PathLike, (typeof options === 'object' && options?.flag) || 'w'));
    fs.writeFileSync(DEV_FULL, data);
  };
  const mocked = { openSync, writeFileSync };
  return { ...fs, ...mocked, default: { ...fs, ...mocked } };
}

/** The error Node's copyFile throws when the disk fills while `src` is copied to `dest`. */
function copyFull(src: unknown, dest: unknown): Error {
  return Object.assign(new Error(`ENOSPC: no space left on device, copyfile '${src}' -> '${dest}'`), {
    errno: -28,
    code: 'ENOSPC',
    syscall: 'copyfile',
    path: String(src),
    dest: String(dest),
  });
}

/** node:fs/promises with `faults`: open, writeFile and copyFile. */
export function faultyFsPromises(fs: typeof FsPromises, faults: DiskFaults): Record<string, unknown> {
  const { full } = faults;
  const open = (async (path: Fs.PathLike, flags?: Fs.OpenMode, mode?: Fs.Mode) => {
    if (!listed(full, path) || !writes(flags)) return fs.open(path, flags, mode);
    await (await fs.open(path, flags, mode)).close();
    const handle = await fs.open(DEV_FULL, 'w');
    const refuse = () => Promise.reject(new Error(`the test never changes ${DEV_FULL}`));
    return {
      fd: handle.fd,
      write: handle.write.bind(handle),
      writev: handle.writev.bind(handle),
      writeFile: handle.writeFile.bind(handle),
      sync: handle.sync.bind(handle),
      stat: handle.stat.bind(handle),
      close: handle.close.bind(handle),
      chmod: refuse,
      chown: refuse,
      truncate: refuse,
    };
  }) as typeof fs.open;
  const writeFile: typeof fs.writeFile = async (path, data, options) => {
    refuse(faults, path);
    if (!listed(full, path)) return fs.writeFile(path, data, options);
    await (await fs.open(path as Fs.PathLike, (typeof options === 'object' && options?.flag) || 'w')).close();
    await fs.writeFile(DEV_FULL, data);
  };
  const copyFile: typeof fs.copyFile = async (src, dest, mode) => {
    await fs.copyFile(src, dest, mode);
    if (!listed(full, dest)) return;
    await fs.rm(dest, { force: true });
    throw copyFull(src, dest);
  };
  const mocked = { open, writeFile, copyFile };
  return { ...fs, ...mocked, default: { ...fs, ...mocked } };
}
