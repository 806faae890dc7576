import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTree } from '../src/fs/remove-tree.js';
import { tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-remove-')));
afterAll(() => cleanup());

async function tree(name: string, files: number): Promise<string> {
  const dir = join(root, name);
  for (const sub of ['a/x', 'a/y', 'b']) {
    await mkdir(join(dir, sub), { recursive: true });
    await Promise.all(Array.from({ length: files }, (_, i) => writeFile(join(dir, sub, `${i}.json`), `${i}`)));
  }
  await writeFile(join(dir, 'top.json'), '{}');
  return dir;
}

describe('removeTree', () => {
  it.each([
    ['a tree of nested directories, more files than unlinks in flight', 'deep', 200],
    ['a tree of empty directories', 'empty', 0],
  ])('deletes %s', async (_, name, files) => {
    await removeTree(await tree(name, files));
    expect(await readdir(root)).not.toContain(name);
  });

  it('deletes a tree holding read-only directories (someone’s, carried into a site with their permissions)', async () => {
    const dir = await tree('read-only', 2);
    await chmod(join(dir, 'a/x'), 0o555);
    await chmod(join(dir, 'a'), 0o500);
    await removeTree(dir);
    expect(await readdir(root)).not.toContain('read-only');
  });

  it('a missing directory is nothing to do', async () => {
    await expect(removeTree(join(root, 'never-there'))).resolves.toBeUndefined();
  });

  it.each([
    ['a link to a directory (a symlinked site: `current -> v1`)', 'dir'],
    ['a link to a file', 'file'],
    ['a dangling link', 'nothing'],
  ])('given %s itself, unlinks the link and leaves its target whole', async (_, target) => {
    const kept = target === 'dir' ? await tree(`target-of-${target}`, 3) : join(root, `target-of-${target}`);
    if (target === 'file') await writeFile(kept, 'mine');
    const link = join(root, `link-to-${target}`);
    await symlink(kept, link);
    await removeTree(link);
    expect(await readdir(root)).not.toContain(`link-to-${target}`);
    if (target === 'dir') expect(await readdir(join(kept, 'a/x'))).toHaveLength(3);
    if (target === 'file') expect(await readFile(kept, 'utf8')).toBe('mine');
  });

  it('deletes a symbolic link inside the tree, not what it points to', async () => {
    const kept = await tree('kept', 2);
    const dir = join(root, 'with-link');
    await mkdir(dir);
    await symlink(kept, join(dir, 'link'));
    await removeTree(dir);
    expect((await readdir(root)).filter((n) => n === 'with-link' || n === 'kept')).toEqual(['kept']);
    expect(await readdir(join(kept, 'a/x'))).toHaveLength(2);
  });
});
