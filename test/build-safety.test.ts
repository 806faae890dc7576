import {
  cp,
  lstat,
  mkdir,
  readFile,
  readdir,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  truncate,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli-helpers.js';
import { checkSite, siteLeftovers, treeDifferences } from './crash-helpers.js';
import { readTree, tempDir } from './helpers.js';

// What a build does to what surrounds and fills a site directory that is not its own: links on
// the way to it or inside it, someone's files in it, the dataset, and files changed since the
// build. Each failure leaves the site byte-identical and the next build working.

const ROOT = join(import.meta.dirname, '..');
let cwd: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: cwd, cleanup } = await tempDir('cities-safety-'));
  cwd = await realpath(cwd);
  await cp(join(ROOT, 'data'), join(cwd, 'data'), { recursive: true });
  await mkdir(join(cwd, 'mine'));
  await writeFile(join(cwd, 'mine/passwd'), 'root:x:0:0\n');
  await writeFile(join(cwd, 'mine/notes.txt'), 'keep me\n');
});
afterAll(() => cleanup());

const at = (...parts: string[]) => join(cwd, ...parts);
const build = (out: string, ...args: string[]) =>
  cli(
    cwd,
    'build',
    '--out',
    out,
    '--orderings',
    'default',
    '--page-sizes',
    '20',
    '--base-url',
    'https://example.org',
    ...args,
  );
const counts = (stdout: string) =>
  /: (\d+) files: (\d+) written, (\d+) unchanged, (\d+) removed/.exec(stdout)!.slice(1).map(Number);
/** Files of a site built with `--orderings default --page-sizes 20` from the bundled 48 cities: 11 pages × 3 + 7, and 35 of edge data (index, 17 rank files, 17 layouts of one block). */
const FILES = 75;
/** What a user keeps in `mine/`, byte for byte, with the mtimes. */
const mine = async () =>
  Promise.all(
    ['passwd', 'notes.txt'].map(async (f) => [
      await readFile(at('mine', f), 'utf8'),
      (await stat(at('mine', f))).mtimeMs,
    ]),
  );

async function builtOk(out: string, ...args: string[]): Promise<string> {
  const run = await build(out, ...args);
  expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
  return run.stdout;
}

/** The site's own files are whole (checked against its manifest); entries in `extra` are allowed besides. */
async function wholeSite(dir: string, extra: readonly string[] = []): Promise<void> {
  const { problems } = await checkSite(dir);
  expect(problems.filter((p) => !extra.some((e) => p === `extra file ${e}`))).toEqual([]);
}

describe('a symbolic link as --out or on the way to it: the link survives, nothing is deleted through it', () => {
  it('--out current (current -> releases/v1) rebuilds v1 in place; the link, and what in v1 is not the site’s, survive; the next build works', async () => {
    await builtOk('releases/v1');
    await writeFile(at('releases/v1/notes.txt'), 'release notes');
    await symlink('releases/v1', at('current'));
    const stdout = await builtOk('current', '--page-sizes', '20,50');
    expect(stdout).toMatch(new RegExp(`built current/ \\(→ ${at('releases/v1')}\\): `));
    expect(stdout).toContain("kept 1 file that is not the site's: notes.txt");
    expect(await readlink(at('current'))).toBe('releases/v1');
    expect((await lstat(at('releases/v1'))).isDirectory()).toBe(true);
    await wholeSite(at('releases/v1'), ['notes.txt']);
    expect(await readFile(at('releases/v1/notes.txt'), 'utf8')).toBe('release notes');
    expect(await readdir(at('releases/v1/cities/default'))).toContain('50');
    expect([await siteLeftovers(at('current')), await siteLeftovers(at('releases/v1'))]).toEqual([[], []]);
    expect(counts(await builtOk('current', '--page-sizes', '20,50')).slice(1)).toEqual([0, 46 + 35, 0]);
  });

  it('a dangling --out link: the site is built where it points, the link kept', async () => {
    await symlink('releases/v2', at('next'));
    await builtOk('next');
    expect(await readlink(at('next'))).toBe('releases/v2');
    await wholeSite(at('releases/v2'));
  });

  it('a symbolic link among the parents of --out', async () => {
    await mkdir(at('volumes/www'), { recursive: true });
    await symlink('volumes/www', at('www'));
    await builtOk('www/site');
    await builtOk('www/site', '--page-sizes', '50');
    expect((await lstat(at('www'))).isSymbolicLink()).toBe(true);
    await wholeSite(at('volumes/www/site'));
    expect(await siteLeftovers(at('volumes/www/site'))).toEqual([]);
  });

  it.each([
    ['a page replaced by a link to a file outside the site', 'cities/default/20/2.json', () => at('mine/passwd')],
    ['a .br replaced by a link to a file outside the site', 'cities/default/20/1.json.br', () => at('mine/passwd')],
    ['a site directory replaced by a link to someone’s directory', 'cities/default/20', () => at('mine')],
  ])(
    '%s: the rebuild puts the site’s own file back, never writes or deletes through the link',
    async (_, path, target) => {
      const out = `inner-${path.replace(/\W/g, '-')}`;
      await builtOk(out);
      const before = await mine();
      await rm(at(out, path), { recursive: true });
      await symlink(target(), at(out, path));
      const stdout = await builtOk(out);
      expect(stdout).toMatch(new RegExp(`but \\d+ of its files changed since \\(.*${path.replace(/\./g, '\\.')}`));
      expect((await lstat(at(out, path))).isSymbolicLink()).toBe(false);
      await wholeSite(at(out));
      expect(await mine()).toEqual(before);
      expect(await readdir(at('mine'))).toEqual(['notes.txt', 'passwd']);
    },
  );

  it.each([
    [
      'a staging name (this builder’s) that is a link to someone’s directory',
      (out: string) => `.${out}.staging-${process.pid}`,
      () => at('mine'),
      true,
    ],
    [
      'a previous name of a dead builder that is a link to someone’s directory',
      (out: string) => `.${out}.previous-4194311`,
      () => at('mine'),
      true,
    ],
    [
      'a previous name of a dead builder that is a link, with the site missing: not moved into place',
      (out: string) => `.${out}.previous-4194312`,
      () => at('mine'),
      false,
    ],
    [
      'a lock draft name that is a link to someone’s file',
      (out: string) => `.${out}.lock-${process.pid}`,
      () => at('mine/passwd'),
      true,
    ],
    [
      'a lock that is a link to someone’s file (no builder in it)',
      (out: string) => `.${out}.lock`,
      () => at('mine/passwd'),
      true,
    ],
    [
      // (Of a pid no process can have: a name of this pid with no token, written since this process
      // started, may be a live writer's here, an older version's, and is kept: dead-drafts.test.ts.)
      'a stat cache draft name that is a link to someone’s file',
      (out: string) => `.${out}.stat-cache-${2 ** 22}`,
      () => at('mine/passwd'),
      true,
    ],
  ])('%s: unlinked or replaced, never followed', async (_, name, target, siteFirst) => {
    const out = `sibling-${name('x').replace(/\W/g, '')}`;
    if (siteFirst) await builtOk(out);
    const before = await mine();
    await rm(at(name(out)), { force: true });
    await symlink(target(), at(name(out)));
    await builtOk(out, '--page-sizes', '50');
    expect(await mine()).toEqual(before);
    expect(await readdir(at('mine'))).toEqual(['notes.txt', 'passwd']);
    expect((await lstat(at(out))).isDirectory()).toBe(true);
    await wholeSite(at(out));
    expect(await siteLeftovers(at(out))).toEqual([]);
    expect(counts(await builtOk(out, '--page-sizes', '50'))[1]).toBe(0);
  });
});

describe('what has the stat cache’s name but is no stat cache (.NAME.stat-cache) is left as it is, and said', () => {
  /** The entry at `path` as a build would change it: its type, its link's target, its bytes or its listing. */
  const snapshot = async (path: string) => {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) return { link: await readlink(path), mtime: stats.mtimeMs };
    if (stats.isDirectory()) return { dir: await readTree(path), mtime: stats.mtimeMs };
    return { file: await readFile(path, 'utf8'), mtime: stats.mtimeMs };
  };
  it.each<[string, (cache: string) => Promise<unknown>, string]>([
    [
      'a directory holding someone’s file',
      (c) => mkdir(c).then(() => writeFile(join(c, 'notes.txt'), 'mine')),
      'a directory',
    ],
    ['an empty directory', (c) => mkdir(c), 'a directory'],
    ['a symbolic link to someone’s file', (c) => symlink(at('mine/passwd'), c), 'a symbolic link'],
    ['a dangling symbolic link', (c) => symlink(at('nowhere'), c), 'a symbolic link'],
    ['someone’s file of that name', (c) => writeFile(c, 'my notes\n'), 'a file no build wrote'],
    ['an empty file', (c) => writeFile(c, ''), 'a file no build wrote'],
  ])('%s: kept through two builds, no draft left beside the site, one warning line each', async (_, make, what) => {
    const out = `foreign-cache-${_.replace(/\W/g, '-')}`;
    const cache = at(`.${out}.stat-cache`);
    await make(cache);
    const before = await snapshot(cache);
    const passwd = await mine();
    for (const round of [1, 2]) {
      const run = await build(out, '--page-sizes', String(10 * round));
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toBe(
        `cities-api: warning: ${cache}: ${what} where a build keeps its stat cache (its record of the site's files): left as it is, so every build reads all the site's files again; move it aside or delete it\n`,
      );
      expect(await snapshot(cache)).toEqual(before);
      expect(await siteLeftovers(at(out))).toEqual([]);
      await wholeSite(at(out));
    }
    expect(await mine()).toEqual(passwd);
    // Moved aside, as the warning says: the next build keeps its record again, and says nothing.
    await rename(cache, at(`${out}-moved-aside`));
    await builtOk(out);
    expect(counts(await builtOk(out))[1]).toBe(0);
    expect((await lstat(cache)).isFile()).toBe(true);
  });
});

describe('files in the site directory that are not the site’s are kept', () => {
  it('through rebuilds that add and drop pages and through --force; the build names them', async () => {
    await builtOk('kept');
    await writeFile(at('kept/notes.txt'), 'notes');
    await mkdir(at('kept/media/img'), { recursive: true });
    await writeFile(at('kept/media/img/logo.svg'), '<svg/>');
    await mkdir(at('kept/empty'), { mode: 0o700 });
    await symlink(at('mine'), at('kept/docs'));
    await writeFile(at('kept/cities/default/20/README'), 'mine, among the pages');
    await mkdir(at('kept/cities/default/20/extra'));
    const expected = [
      'cities/default/20/README',
      'cities/default/20/extra/',
      'docs',
      'empty/',
      'media/img/logo.svg',
      'notes.txt',
    ];
    for (const args of [
      ['--page-sizes', '50'],
      ['--page-sizes', '20'],
      ['--force'],
      ['--page-sizes', '20,50', '--no-compress'],
    ]) {
      const stdout = await builtOk('kept', ...args);
      expect(stdout).toContain(`kept 6 files that are not the site's: ${expected.slice(0, 5).join(', ')} and 1 more`);
    }
    expect(await readFile(at('kept/notes.txt'), 'utf8')).toBe('notes');
    expect(await readFile(at('kept/media/img/logo.svg'), 'utf8')).toBe('<svg/>');
    expect(await readFile(at('kept/cities/default/20/README'), 'utf8')).toBe('mine, among the pages');
    expect(await readlink(at('kept/docs'))).toBe(at('mine'));
    expect((await stat(at('kept/empty'))).mode & 0o777).toBe(0o700);
    expect((await stat(at('kept/cities/default/20/extra'))).isDirectory()).toBe(true);
    await wholeSite(at('kept'), ['notes.txt', 'media/img/logo.svg', 'cities/default/20/README']);
  });

  it('a .gz/.br beside a file the site lists is the site’s: it goes when the site no longer has it', async () => {
    await builtOk('variants');
    await writeFile(at('variants/openapi.json.gz'), 'stale');
    const stdout = await builtOk('variants', '--page-sizes', '50');
    expect(counts(stdout)[3]).toBe(4 * 3 + 1);
    await expect(stat(at('variants/openapi.json.gz'))).rejects.toThrow(/ENOENT/);
    expect(stdout).not.toContain('kept');
  });

  it('the dataset inside --out is refused before anything is written (exit 2); moved out, the build works', async () => {
    await builtOk('holds-data');
    await cp(at('data/cities.csv'), at('holds-data/my.csv'));
    const before = await readTree(at('holds-data'));
    const run = await build('holds-data', '--data', 'holds-data/my.csv', '--force');
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toBe(
      `cities-api: cannot build into ${at('holds-data')}: the dataset ${at('holds-data/my.csv')} is inside it, and a build replaces the whole directory; keep the dataset outside the site (e.g. data/cities.csv) (nothing was written)\n`,
    );
    expect(treeDifferences(before, await readTree(at('holds-data')))).toEqual([]);
    await rename(at('holds-data/my.csv'), at('my.csv'));
    await builtOk('holds-data', '--data', 'my.csv', '--force');
  });

  it.each([
    ['the dataset’s own directory', ['--out', 'data'], /the dataset .*\/proj\/data\/cities\.csv is inside it/],
    [
      'the working directory (.)',
      ['--out', '.'],
      /it is or contains the working directory .*\/proj, and a build replaces the whole directory; choose a directory of its own with --site, e.g. dist/,
    ],
    [
      'the working directory, the dataset elsewhere',
      ['--out', '.', '--data', '../elsewhere.csv'],
      /it is or contains the working directory/,
    ],
    [
      'a parent of the working directory',
      ['--out', '..', '--data', 'data/cities.csv'],
      /it is or contains the working directory/,
    ],
    ['a file (the dataset itself)', ['--out', 'data/cities.csv'], /the dataset .*cities\.csv is inside it/],
    ['a file', ['--out', 'data/README.md'], /it is a file, not a directory; choose a directory/],
  ])('--out as %s is refused (exit 2), nothing written', async (_, args, message) => {
    const project = at('proj');
    await cp(at('data'), join(project, 'data'), { recursive: true });
    await cp(at('data/cities.csv'), at('elsewhere.csv'));
    const before = await readTree(project);
    const run = await cli(project, 'build', ...args);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toMatch(/\(nothing was written\)\n$/);
    expect(treeDifferences(before, await readTree(project))).toEqual([]);
    expect(await readdir(project)).toEqual(['data']);
  });

  it('--out inside the dataset’s directory works and leaves the dataset as it was', async () => {
    const before = await readFile(at('data/cities.csv'));
    await builtOk('data/site');
    await builtOk('data/site', '--page-sizes', '50');
    expect((await readFile(at('data/cities.csv'))).equals(before)).toBe(true);
    expect((await readdir(at('data'))).sort()).toEqual(['.site.stat-cache', 'README.md', 'cities.csv', 'site']);
  });

  it.each([
    ['only a link', (dir: string) => symlink(at('mine'), join(dir, 'link'))],
    ['only an empty directory', (dir: string) => mkdir(join(dir, 'empty'))],
  ])('a directory holding %s is not a site: refused (exit 2), left as it was', async (_, fill) => {
    const dir = at(`not-a-site-${Math.random().toString(36).slice(2)}`);
    await mkdir(dir);
    await fill(dir);
    const before = await readdir(dir);
    const run = await build(dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/exists and is not a cities-api site/);
    expect(await readdir(dir)).toEqual(before);
  });

  it('a file of someone’s where the new site writes one stops the build (exit 2), the site byte-identical; moved away, the build works', async () => {
    await builtOk('clash');
    await mkdir(at('clash/cities/default/50'), { recursive: true });
    await writeFile(at('clash/cities/default/50/1.json'), 'my own page');
    const before = await readTree(at('clash'));
    const run = await build('clash', '--page-sizes', '20,50');
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `cities-api: ${at('clash/cities/default/50/1.json')}: not the site's (its manifest does not list it), but the new site has a file or directory there; move it out of ${at('clash')} and build again (the site was left as it was)\n`,
    );
    expect(treeDifferences(before, await readTree(at('clash')))).toEqual([]);
    expect(await siteLeftovers(at('clash'))).toEqual([]);
    await rename(at('clash/cities/default/50/1.json'), at('my-page.json'));
    await builtOk('clash', '--page-sizes', '20,50');
    await wholeSite(at('clash'));
  });
});

describe('a plain rebuild notices files that are not as built and rewrites them', () => {
  const samesize = (text: string) => text.replace(/[a-z]/, (c) => (c === 'z' ? 'y' : 'z'));
  it.each<[string, string, (file: string) => Promise<unknown>]>([
    [
      'a page edited in place, same size',
      'cities/default/20/1.json',
      async (f) => writeFile(f, samesize(await readFile(f, 'utf8'))),
    ],
    ['a page truncated', 'cities/default/20/2.json', (f) => truncate(f, 10)],
    [
      'a page replaced by another file (renamed over it)',
      'cities/default/default/1.json',
      async (f) => {
        await writeFile(`${f}.new`, '{}');
        await rename(`${f}.new`, f);
      },
    ],
    [
      'a page turned into a directory',
      'cities/default/all-48.json',
      async (f) => {
        await unlink(f);
        await mkdir(f);
      },
    ],
    [
      'a page turned into a named pipe (never opened)',
      'cities/default/default/2.json',
      async (f) => {
        await unlink(f);
        await promisify(execFile)('mkfifo', [f]);
      },
    ],
    ['a .gz corrupted', 'cities/default/20/last.json.gz', (f) => writeFile(f, 'not gzip')],
    ['a .br deleted', 'cities/default/20/1.json.br', (f) => unlink(f)],
    ['the dataset copy edited', '_cities-api/cities.json', async (f) => writeFile(f, `${await readFile(f, 'utf8')}\n`)],
    ['openapi.json emptied', 'openapi.json', (f) => writeFile(f, '')],
  ])('%s', async (name, path, damage) => {
    const out = `damaged-${name.replace(/\W/g, '-')}`;
    await builtOk(out);
    const good = await readTree(at(out));
    await damage(at(out, path));
    const stdout = await builtOk(out);
    expect(stdout).toContain(
      `the site was built from this input, but 1 of its files changed since (${path}): building`,
    );
    expect(counts(stdout).slice(1)).toEqual([1, FILES - 1, 0]);
    expect(treeDifferences(good, await readTree(at(out)))).toEqual([]);
    expect(await builtOk(out)).toMatch(/its files are as built: nothing to write/);
  });

  it('a same-size edit with its mtime put back is seen by a plain rebuild (its ctime moved) and rewritten', async () => {
    await builtOk('sneaky');
    const file = at('sneaky/cities/default/20/1.json');
    // touch -r copies the mtime to the nanosecond (fs.utimes takes a double: not exact).
    await promisify(execFile)('cp', ['-p', file, at('sneaky-reference')]);
    await writeFile(file, samesize(await readFile(file, 'utf8')));
    await promisify(execFile)('touch', ['-r', at('sneaky-reference'), file]);
    expect(counts(await builtOk('sneaky')).slice(1)).toEqual([1, FILES - 1, 0]);
    await wholeSite(at('sneaky'));
    expect(await builtOk('sneaky')).toMatch(/nothing to write/);
  });

  it('without the stat cache, a rebuild reads the old files: intact ones are reused (nothing written), a damaged one is rewritten', async () => {
    await builtOk('no-cache');
    await unlink(at('.no-cache.stat-cache'));
    await writeFile(at('no-cache/cities/default/20/2.json.gz'), 'bad');
    const stdout = await builtOk('no-cache');
    expect(stdout).toMatch(/there is no record of its files to check them by .*reading the old files/);
    expect(counts(stdout).slice(1)).toEqual([1, FILES - 1, 0]);
    await wholeSite(at('no-cache'));
    expect(await builtOk('no-cache')).toMatch(/nothing to write/);
  });

  it('a manifest edited by hand unbinds the stat cache: every file is read, none trusted', async () => {
    await builtOk('edited-manifest');
    const manifest = at('edited-manifest/_cities-api/manifest.json');
    await writeFile(manifest, await readFile(manifest));
    await writeFile(at('edited-manifest/cities/default/20/3.json'), 'x');
    const stdout = await builtOk('edited-manifest');
    expect(stdout).toMatch(/no record of its files/);
    expect(counts(stdout).slice(1)).toEqual([1, FILES - 1, 0]);
    await wholeSite(at('edited-manifest'));
  });
});
