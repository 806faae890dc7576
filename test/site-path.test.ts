import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSiteLocation, isWithin, resolveSiteDir } from '../src/store/site-path.js';
import { tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-site-path-'));
  root = await realpath(root);
  await mkdir(join(root, 'releases/v1'), { recursive: true });
  await mkdir(join(root, 'real-parent'));
  await mkdir(join(root, 'data'));
  await writeFile(join(root, 'data/cities.csv'), 'id\n');
  await writeFile(join(root, 'a-file'), 'x');
  await symlink('releases/v1', join(root, 'current'));
  await symlink('releases/v2', join(root, 'dangling'));
  await symlink('real-parent', join(root, 'parent-link'));
  await symlink('loop-b', join(root, 'loop-a'));
  await symlink('loop-a', join(root, 'loop-b'));
  await symlink('../../data/cities.csv', join(root, 'releases/v1/linked.csv'));
});
afterAll(() => cleanup());

describe('resolveSiteDir: the real directory a build works on', () => {
  it.each([
    ['a plain directory is itself', 'releases/v1', 'releases/v1'],
    ['a link to a directory is its target (the link is never renamed)', 'current', 'releases/v1'],
    ['a dangling link is where it points (the site is built there)', 'dangling', 'releases/v2'],
    ['a link among the parents is followed', 'parent-link/site', 'real-parent/site'],
    ['missing parents are kept as written', 'new/deep/site', 'new/deep/site'],
    ['a link to a directory, then missing parts', 'current/sub/site', 'releases/v1/sub/site'],
  ])('%s', async (_, given, expected) => {
    expect(await resolveSiteDir(join(root, given))).toBe(join(root, expected));
  });

  it('a loop of links is refused with exit 2', async () => {
    await expect(resolveSiteDir(join(root, 'loop-a'))).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/loop-a as the site directory: too many symbolic links/),
    });
  });
});

describe('checkSiteLocation refuses a directory a build must not replace (exit 2, nothing written)', () => {
  it.each([
    [
      'the dataset inside the site directory',
      'data',
      'data/cities.csv',
      'root',
      /the dataset .*cities\.csv is inside it/,
    ],
    [
      'the dataset is the site directory itself',
      'data/cities.csv',
      'data/cities.csv',
      'root',
      /the dataset .* is inside it/,
    ],
    [
      'a dataset given through a link, whose real file is inside',
      'data',
      'releases/v1/linked.csv',
      'root',
      /the dataset .*linked\.csv is inside it/,
    ],
    ['the working directory', 'releases', 'data/cities.csv', 'releases', /is or contains the working directory/],
    [
      'a directory containing the working directory',
      'releases',
      'data/cities.csv',
      'releases/v1',
      /is or contains the working directory/,
    ],
    ['a file', 'a-file', 'data/cities.csv', 'root', /it is a file, not a directory/],
  ])('%s', async (_, out, data, cwd, message) => {
    const location = { out: join(root, out), data: join(root, data), cwd: cwd === 'root' ? root : join(root, cwd) };
    await expect(checkSiteLocation(location)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(message),
    });
    await expect(checkSiteLocation(location)).rejects.toThrow(/\(nothing was written\)$/);
  });

  it.each([
    ['the filesystem root', '/', /the filesystem root/],
    ['the home directory', homedir(), /is or contains the home directory/],
    // A Docker volume or any mount: the build's swap (renaming the old tree aside) fails with EBUSY after the whole build.
    ['a mount point (/proc, its own filesystem)', '/proc', /it is a mount point.*mount its parent directory instead/],
  ])('%s', async (_, out, message) => {
    await expect(checkSiteLocation({ out, data: join(root, 'data/cities.csv'), cwd: root })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(message),
    });
  });

  it.each([
    ['a new directory beside the dataset', 'site'],
    [
      'a directory inside the dataset’s directory (its siblings are dot-named, the dataset is never touched)',
      'data/site',
    ],
    ['an existing directory', 'releases/v1'],
  ])('accepts %s', async (_, out) => {
    await expect(
      checkSiteLocation({ out: join(root, out), data: join(root, 'data/cities.csv'), cwd: root }),
    ).resolves.toBeUndefined();
  });
});

describe('isWithin', () => {
  it.each([
    ['/a/b', '/a', true],
    ['/a', '/a', true],
    ['/ab', '/a', false],
    ['/a/..b', '/a', true],
    ['/', '/a', false],
  ])('%s within %s: %s', (path, dir, expected) => {
    expect(isWithin(path, dir)).toBe(expected);
  });
});
