import { execFile } from 'node:child_process';
import type * as fs from 'node:fs';
import type * as fsPromises from 'node:fs/promises';
import { lstat, mkdir, readdir, readFile, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { draftName } from '../src/fs/dead-drafts.js';
import { linkEntry, reuse, writeNew } from '../src/fs/file-output.js';
import { createThrough } from '../src/fs/through-draft.js';
import { tempDir } from './helpers.js';

// linkSync fails as on another filesystem while `crossDevice` is set: the copy that replaces the link.
let crossDevice = false;
vi.mock('node:fs', async (original) => {
  const real = await original<typeof fs>();
  const linkSync: typeof real.linkSync = (from, to) => {
    if (crossDevice) throw Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' });
    return real.linkSync(from, to);
  };
  return { ...real, default: { ...real, linkSync }, linkSync };
});
// link fails as on a file system without hard links (FAT) while `noLinks` is set: the draft renamed instead.
let noLinks = false;
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof fsPromises>();
  const link: typeof real.link = (from, to) =>
    noLinks
      ? Promise.reject(Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' }))
      : real.link(from, to);
  return { ...real, default: { ...real, link }, link };
});

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-file-output-')));
afterAll(() => cleanup());

let n = 0;
/** A fresh old/new pair of directories, the old one holding `page.json`. */
async function pair(): Promise<{ from: string; to: string }> {
  const dir = join(root, String(++n));
  await mkdir(join(dir, 'old'), { recursive: true });
  await mkdir(join(dir, 'new'));
  await writeFile(join(dir, 'old', 'page.json'), '{"count":1}');
  await utimes(join(dir, 'old', 'page.json'), new Date(1e12), new Date(1e12));
  return { from: join(dir, 'old', 'page.json'), to: join(dir, 'new', 'page.json') };
}

describe('linkEntry', () => {
  it.each<[string, (from: string) => Promise<unknown>, 'file' | 'symlink' | 'fifo' | null | undefined]>([
    ['a regular file: linked, its lstat given', async () => undefined, 'file'],
    [
      'a symbolic link: the link itself is linked, never what it points to',
      async (from) => {
        await rm(from);
        await symlink('/etc/passwd', from);
      },
      'symlink',
    ],
    [
      'a named pipe: linked, never opened',
      async (from) => {
        await rm(from);
        await promisify(execFile)('mkfifo', [from]);
      },
      'fifo',
    ],
    [
      'a directory: cannot be linked (undefined)',
      async (from) => {
        await rm(from);
        await mkdir(from);
      },
      undefined,
    ],
    ['gone: null', async (from) => rm(from), null],
  ])('%s', async (_, make, expected) => {
    const { from, to } = await pair();
    await make(from);
    const linked = linkEntry(from, to);
    if (!linked) return expect(linked).toBe(expected);
    expect(linked.isFile() ? 'file' : linked.isSymbolicLink() ? 'symlink' : linked.isFIFO() ? 'fifo' : 'other').toBe(
      expected,
    );
    expect(linked.ino).toBe((await lstat(from)).ino);
  });
});

describe('reuse', () => {
  it.each([
    ['linked: the same inode', false],
    ['where links are impossible: copied, keeping its mtime', true],
  ])('%s', async (_, across) => {
    const { from, to } = await pair();
    const stats = await lstat(from);
    crossDevice = across;
    try {
      const kept = await reuse(from, to, stats);
      expect(kept?.mtimeMs).toBe(stats.mtimeMs);
      expect(kept?.ino === stats.ino).toBe(!across);
      expect(await readFile(to, 'utf8')).toBe('{"count":1}');
    } finally {
      crossDevice = false;
    }
  });

  it('a file replaced since its stats were taken: null, nothing left at the new name', async () => {
    const { from, to } = await pair();
    const stats = await lstat(from);
    await writeFile(`${from}.new`, '{"count":1}');
    await rename(`${from}.new`, from);
    expect(await reuse(from, to, stats)).toBeNull();
    await expect(lstat(to)).rejects.toThrow(/ENOENT/);
  });
});

describe('createThrough', () => {
  it.each([
    ['linked into place', false],
    ['renamed into place where hard links are refused', true],
  ])(
    '%s: the file created whole, no draft left; a name already taken: false, what has it left as it is',
    async (_, refused) => {
      const dir = join(root, String(++n));
      await mkdir(dir);
      const [path, drafts] = [join(dir, 'worker.js'), draftName(join(dir, '.worker.js.'), '.draft')];
      noLinks = refused;
      try {
        expect(await createThrough(drafts, path, (draft) => writeNew(draft, 'ours'))).toBe(true);
        expect(await readFile(path, 'utf8')).toBe('ours');
        await writeFile(path, 'theirs');
        expect(await createThrough(drafts, path, (draft) => writeNew(draft, 'ours again'))).toBe(false);
      } finally {
        noLinks = false;
      }
      expect(await readFile(path, 'utf8')).toBe('theirs');
      expect(await readdir(dir)).toEqual(['worker.js']);
    },
  );
});
