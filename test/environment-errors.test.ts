import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CitiesApiError } from '../src/core/errors.js';
import { fileSystemError } from '../src/fs/fs-error.js';
import { readTree, tempDir } from './helpers.js';
import { readableCopy } from './readable-copy.js';
import { PROGRESS_LINES } from './cli-helpers.js';

// Environment errors as a user meets them: the CLI run as a process (as root it drops to
// `nobody` where permissions matter, running a copy of the package that `nobody` can read, since
// the clone may be under a private directory), each answered with one line naming the path and
// what to do, exit 1, no stack trace, and nothing built before lost.

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/cities-api.js');
const SAMPLE = join(ROOT, 'data/cities.csv');
const isRoot = process.getuid?.() === 0;
const RUNUSER = '/usr/sbin/runuser';

/** Whether permission cases can run: as a non-root user, or as root through runuser. */
function canDropPrivileges(): boolean {
  if (!isRoot || existsSync(RUNUSER)) return true;
  const message = `running as root and ${RUNUSER} is missing: permission errors cannot be checked (install util-linux)`;
  if (process.env.CI === 'true') throw new Error(`${message} (CI must not skip this test)`);
  console.warn(`\n!!! SKIPPING permission cases: ${message} !!!\n`);
  return false;
}
const PERMISSIONS = canDropPrivileges();
const NOBODY = 65534;
const SMALL = ['--no-compress', '--orderings', 'default', '--base-url', 'https://example.org'];

let dir: string;
let cleanup: () => Promise<void>;
/** The CLI that `nobody` runs: from a readable copy of the package when this is root. */
let unprivilegedBin = BIN;
let copy: { cleanup: () => Promise<void> } | undefined;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('cities-env-'));
  if (isRoot && PERMISSIONS) {
    const readable = await readableCopy(ROOT);
    copy = readable;
    unprivilegedBin = join(readable.dir, 'bin/cities-api.js');
  }
  // Another user must reach the fixtures (mkdtemp makes the directory 0700).
  await chmod(dir, 0o755);
  await copyFile(SAMPLE, join(dir, 'cities.csv'));
  await chmod(join(dir, 'cities.csv'), 0o644);
  await writeFile(join(dir, 'a-file'), 'not a directory\n');
  await mkdir(join(dir, 'folder.csv'));
  await copyFile(SAMPLE, join(dir, 'secret.csv'));
  await chmod(join(dir, 'secret.csv'), 0o600);
  await mkdir(join(dir, 'closed'));
  await copyFile(SAMPLE, join(dir, 'closed/cities.csv'));
  await chmod(join(dir, 'closed'), 0o700);
  await mkdir(join(dir, 'empty'));
  await chmod(join(dir, 'empty'), 0o755);
  // A site built before, in a directory then made read-only: a failed build must leave it whole.
  await mkdir(join(dir, 'read-only'));
  await run(false, 'build', '--data', join(dir, 'cities.csv'), '--out', join(dir, 'read-only/site'), ...SMALL);
  await chmod(join(dir, 'read-only'), 0o555);
  // A directory where a file of cities-api's belongs: a site's manifest, an edge project's record of its files.
  await run(false, 'build', '--data', join(dir, 'cities.csv'), '--out', join(dir, 'manifest-dir/site'), ...SMALL);
  await rm(join(dir, 'manifest-dir/site/_cities-api/manifest.json'));
  await mkdir(join(dir, 'manifest-dir/site/_cities-api/manifest.json'));
  await mkdir(join(dir, 'edge-record/.cities-api-edge.json'), { recursive: true });
  // A directory where a lock belongs: the site's, the dataset's.
  await mkdir(join(dir, 'lock-dir/.site.lock'), { recursive: true });
  await mkdir(join(dir, 'lock-data/.cities.csv.lock'), { recursive: true });
  await copyFile(SAMPLE, join(dir, 'lock-data/cities.csv'));
  await mkdir(join(dir, 'wal-data/.cities.csv.wal'), { recursive: true });
  await copyFile(SAMPLE, join(dir, 'wal-data/cities.csv'));
  await mkdir(join(dir, 'read-only-2'));
  await chmod(join(dir, 'read-only-2'), 0o555);
  // A site of nobody's holding root's unreadable file (e.g. a certificate challenge): a build carries it into
  // the new tree, by a hard link, which the kernel refuses for another user's file it cannot write, or a copy.
  if (isRoot && PERMISSIONS) {
    await mkdir(join(dir, 'nobodys'));
    await chown(join(dir, 'nobodys'), NOBODY, NOBODY);
    await run(true, 'build', '--data', join(dir, 'cities.csv'), '--out', join(dir, 'nobodys/site'), ...SMALL);
    await writeFile(join(dir, 'nobodys/site/secret.txt'), 'root only\n', { mode: 0o600 });
  }
}, 60_000);
afterAll(async () => {
  await cleanup();
  await copy?.cleanup();
});

/** Runs the CLI as a process, as an unprivileged user when asked (and when this is root). */
async function run(
  unprivileged: boolean,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [command, argv] =
    unprivileged && isRoot
      ? [RUNUSER, ['-u', 'nobody', '--', process.execPath, unprivilegedBin, ...args]]
      : [process.execPath, [BIN, ...args]];
  // A serve that listens instead of refusing is stopped, its case failed (no exit code 1).
  return promisify(execFile)(command, argv, { cwd: dir, env: { ...process.env, CI: '' }, timeout: 30_000 }).then(
    // Without progress lines, which a loaded machine's timing decides (a phase over a second).
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr: stderr.replace(PROGRESS_LINES, '') }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr.replace(PROGRESS_LINES, ''),
    }),
  );
}

const at = (path: string) => () => join(dir, path);
type Case = [name: string, unprivileged: boolean, args: () => string[], message: () => RegExp];
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const path = (name: string) => escape(join(dir, name));

const CASES: Case[] = [
  [
    '--out under a read-only directory names the directory, not the lock file',
    true,
    () => [
      'build',
      '--data',
      at('cities.csv')(),
      '--out',
      at('read-only-2/site')(),
      '--base-url',
      'https://example.org',
    ],
    () =>
      new RegExp(
        `permission denied: cannot write in ${path('read-only-2')} \\(for the site directory ${path('read-only-2/site')}\\); make that directory writable for this user, or choose another with --site \\(EACCES; the site was left as it was\\)$`,
      ),
  ],
  [
    'a rebuild of a site whose parent is read-only names that directory',
    true,
    () => [
      'build',
      '--data',
      at('cities.csv')(),
      '--out',
      at('read-only/site')(),
      '--force',
      '--no-compress',
      '--orderings',
      'default',
      '--base-url',
      'https://example.org',
    ],
    () =>
      new RegExp(
        `permission denied: cannot write in ${path('read-only')} \\(for the site directory ${path('read-only/site')}\\)`,
      ),
  ],
  [
    '--out under a regular file names that file',
    false,
    () => ['build', '--data', at('cities.csv')(), '--out', at('a-file/site')()],
    () =>
      new RegExp(
        `the site directory ${path('a-file/site')} cannot be used: ${path('a-file')} is a file, not a directory; move it away, or choose another with --site \\(ENOTDIR`,
      ),
  ],
  [
    '--out deep under a regular file names that file',
    false,
    () => ['build', '--data', at('cities.csv')(), '--out', at('a-file/x/y')()],
    () => new RegExp(`${path('a-file')} is a file, not a directory`),
  ],
  [
    '--data a directory',
    false,
    () => ['build', '--data', at('folder.csv')(), '--out', at('out-1')()],
    () =>
      new RegExp(
        `cannot read dataset ${path('folder.csv')}: it is a directory; give the path of a regular .csv or .json file$`,
      ),
  ],
  [
    '--data a directory without an extension',
    false,
    () => ['validate', '--data', dir],
    () => new RegExp(`cannot read dataset ${escape(dir)}: it is a directory`),
  ],
  [
    'a missing --data points at --data and the sample shipped in the package',
    false,
    () => ['build', '--data', at('nowhere.csv')(), '--out', at('out-2')()],
    () =>
      new RegExp(
        `the dataset ${path('nowhere.csv')} does not exist; check the path, or choose another with --data; to try cities-api, a sample of 48 cities ships with it: --data ${escape(SAMPLE)} \\(ENOENT\\)$`,
      ),
  ],
  [
    'a bare build without data/cities.csv points at --data and the sample',
    false,
    () => ['build', '--out', at('out-3')()],
    // The default dataset path, named relative as the default is.
    () => new RegExp(`the dataset data/cities\\.csv does not exist; .*--data ${escape(SAMPLE)}`),
  ],
  [
    '--data under a regular file names that file',
    false,
    () => ['validate', '--data', at('a-file/cities.csv')()],
    () =>
      new RegExp(
        `the dataset ${path('a-file/cities.csv')} cannot be used: ${path('a-file')} is a file, not a directory`,
      ),
  ],
  [
    'an unreadable --data',
    true,
    () => ['validate', '--data', at('secret.csv')()],
    () =>
      new RegExp(
        `permission denied: cannot open the dataset ${path('secret.csv')}; give this user access to it \\(chmod/chown\\), or choose another with --data \\(EACCES\\)$`,
      ),
  ],
  [
    '--data in a directory this user cannot enter names that directory',
    true,
    () => ['validate', '--data', at('closed/cities.csv')()],
    () =>
      new RegExp(
        `permission denied: cannot enter ${path('closed')} \\(for the dataset ${path('closed/cities.csv')}\\)`,
      ),
  ],
  // A read of a directory fails with EISDIR naming no path: it was said of the site or project directory itself,
  // "the site directory DIR is a directory; give the path of a file".
  [
    'a site whose manifest is a directory names the manifest, to be moved aside',
    false,
    () => ['build', '--data', at('cities.csv')(), '--out', at('manifest-dir/site')(), ...SMALL],
    () =>
      new RegExp(
        `^cities-api: ${path('manifest-dir/site/_cities-api/manifest.json')} \\(of the site directory ${path('manifest-dir/site')}\\) is a directory where a file belongs; move it aside or delete it \\(EISDIR`,
      ),
  ],
  [
    'serve on a site whose manifest is a directory names the manifest, not the /proc/self/fd path it read it through',
    false,
    () => ['serve', '--site', at('manifest-dir/site')(), '--port', '0'],
    () =>
      new RegExp(
        `^cities-api: ${path('manifest-dir/site/_cities-api/manifest.json')} \\(of the site directory ${path('manifest-dir/site')}\\) is a directory where a file belongs; move it aside or delete it \\(EISDIR`,
      ),
  ],
  [
    'an edge project whose record of its files is a directory names the record',
    false,
    () => ['edge', 'deno', '--site', at('read-only/site')(), '--project', at('edge-record')()],
    () =>
      new RegExp(
        `^cities-api: ${path('edge-record/.cities-api-edge.json')} \\(of the edge project directory ${path('edge-record')}\\) is a directory where a file belongs; move it aside or delete it \\(EISDIR`,
      ),
  ],
  ...(
    [
      ["the site's lock", 'lock-dir/.site.lock', 'cities.csv', 'lock-dir/site', 'site directory', 'lock-dir/site'],
      // It was said "(of the site directory .../lock-data/site)": the build's own role, not the lock's owner.
      [
        "the dataset's lock",
        'lock-data/.cities.csv.lock',
        'lock-data/cities.csv',
        'lock-data/site',
        'dataset',
        'lock-data/cities.csv',
      ],
      // It was said "the dataset's write-ahead log ... is a directory; give the path of a file": no option gives it.
      [
        "the dataset's write-ahead log",
        'wal-data/.cities.csv.wal',
        'wal-data/cities.csv',
        'wal-data/site',
        'dataset',
        'wal-data/cities.csv',
      ],
    ] as const
  ).map(
    ([whose, file, data, out, what, owner]): Case => [
      `${whose} a directory names it and whose it is, to be moved aside`,
      false,
      () => ['build', '--data', at(data)(), '--out', at(out)(), ...SMALL],
      () =>
        new RegExp(
          `^cities-api: ${path(file)} \\(of the ${what} ${path(owner)}\\) is a directory where a file belongs; move it aside or delete it \\(EISDIR`,
        ),
    ],
  ),
  [
    'config nginx --site with no site',
    false,
    () => ['config', 'nginx', '--site', at('nowhere')()],
    () => new RegExp(`${path('nowhere')} holds no cities-api site: run cities-api build first`),
  ],
  [
    'serve with no site, the same exit code',
    false,
    () => ['serve', at('nowhere')(), '--port', '0'],
    () => new RegExp(`${path('nowhere')} holds no cities-api site: build it first`),
  ],
  [
    'serve given a dataset file where the site goes is told to give it with --data',
    false,
    () => ['serve', at('cities.csv')(), '--port', '0'],
    () => new RegExp(`${path('cities.csv')} is a file, not a site directory: to serve a dataset, give it with --data`),
  ],
  ...(isRoot
    ? ([
        [
          'a rebuild of a site holding a file of someone’s this user cannot read names that file, to be made readable',
          true,
          () => ['build', '--data', at('cities.csv')(), '--out', at('nobodys/site')(), '--force', ...SMALL],
          () =>
            new RegExp(
              `permission denied: cannot read ${path('nobodys/site/secret.txt')} \\(of the site directory ${path('nobodys/site')}\\); give this user read access to it \\(chmod/chown\\)`,
            ),
        ],
      ] satisfies Case[])
    : []),
  [
    'config cloudfront --site in a directory this user cannot enter',
    true,
    () => ['config', 'cloudfront', '--site', at('closed/site')()],
    () =>
      new RegExp(
        `permission denied: cannot enter ${path('closed')} \\(for the site directory ${path('closed/site')}\\)`,
      ),
  ],
];

describe('environment errors: one line naming the path and what to do, exit 1, no stack trace', () => {
  it.each(CASES)(
    '%s',
    async (_, unprivileged, args, message) => {
      if (unprivileged && !PERMISSIONS) return;
      const before = await readTree(join(dir, 'read-only/site'));
      const result = await run(unprivileged, ...args());
      expect(result.code).toBe(1);
      const lines = result.stderr.split('\n').filter((line) => line && !line.startsWith('npm warn'));
      expect(lines).toEqual([expect.stringMatching(/^cities-api: /)]);
      expect(lines[0]).toMatch(message());
      expect(result.stderr).not.toMatch(/unexpected error|\n\s+at /);
      expect(await readTree(join(dir, 'read-only/site'))).toEqual(before);
    },
    60_000,
  );
});

describe('a site up to date needs nothing written beside it', () => {
  it.skipIf(!PERMISSIONS)(
    'a rebuild with nothing to write under a read-only parent says so, exit 0 (it takes no lock to tidy nothing)',
    async () => {
      const result = await run(true, 'build', '--data', at('cities.csv')(), '--out', at('read-only/site')(), ...SMALL);
      expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(/its files are as built: nothing to write/);
    },
    60_000,
  );
});

describe('a dataset in a directory the user cannot write', () => {
  it.skipIf(!PERMISSIONS || !isRoot)(
    'builds: no lock is put beside it (none can be, and no writable server of this user logs there)',
    async () => {
      const out = join(dir, 'nobodys/from-read-only-data');
      const result = await run(true, 'build', '--data', at('cities.csv')(), '--out', out, ...SMALL);
      expect(result, result.stderr).toMatchObject({ code: 0 });
      expect(existsSync(join(out, '_cities-api/manifest.json'))).toBe(true);
    },
    60_000,
  );
});

// A dataset file made read-only (0444) in a directory its user can write: a new version replaces it (a rename,
// which the directory allows, as it does for root); the copy it is staged in was made 0444 too, and
// opening it to write the cities in failed for any user but root, blamed on the directory.
describe('a read-only dataset file in a directory this user can write', () => {
  const CITY = {
    id: 49,
    ...Object.fromEntries(
      ['ar', 'en', 'ch', 'fr', 'ur', 'fa', 'sp', 'de', 'it', 'uk', 'hi', 'id', 'ru', 'pt', 'ms', 'tr'].map((l) => [
        `name_${l}`,
        `Logged ${l}`,
      ]),
    ),
    longitude: null,
    latitude: null,
    top: false,
    created_at: '2026-11-30T16:49:37.367739Z',
    updated_at: '2026-11-30T16:49:37.367739Z',
  };
  it.each([['build', ['build', '--out', 'site', ...SMALL]]])(
    '%s folds the logged city into it, and the file stays read-only',
    async (_, args) => {
      if (!PERMISSIONS) return;
      const own = join(dir, 'read-only-file');
      await mkdir(own);
      const data = join(own, 'cities.csv');
      await copyFile(SAMPLE, data);
      const json = JSON.stringify(CITY);
      await writeFile(join(own, '.cities.csv.wal'), `${json}\t${crc32(json).toString(16).padStart(8, '0')}\n`);
      if (isRoot) for (const path of [own, data, join(own, '.cities.csv.wal')]) await chown(path, NOBODY, NOBODY);
      await chmod(data, 0o444);
      const result = await run(true, ...args.map((arg) => (arg === 'site' ? join(own, 'site') : arg)), '--data', data);
      expect(result, result.stderr).toMatchObject({ code: 0 });
      expect(await readFile(data, 'utf8')).toMatch(/\n49,Logged ar,Logged en,/);
      expect((await stat(data)).mode & 0o777).toBe(0o444);
      expect(existsSync(join(own, '.cities.csv.wal'))).toBe(false);
    },
    60_000,
  );
});

describe('edge cloudflare on a site it cannot write in', () => {
  it.skipIf(!PERMISSIONS)(
    'blames the site directory and --site, not --out, and leaves no deployable project without .assetsignore',
    async () => {
      const out = join(dir, 'edge-out');
      await mkdir(out);
      await chmod(out, 0o777);
      const result = await run(true, 'edge', 'cloudflare', '--site', at('read-only/site')(), '--out', out);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`site directory ${path('read-only/site')}.*--site`));
      expect(result.stderr).not.toMatch(/--out/);
      for (const file of ['worker.js', 'wrangler.jsonc']) expect(existsSync(join(out, file)), file).toBe(false);
    },
    60_000,
  );
});

describe('fileSystemError: every errno becomes a CitiesApiError naming the path', () => {
  const errno = (code: string, syscall: string, path: string) =>
    Object.assign(new Error(`${code}: failed, ${syscall} '${path}'`), { code, syscall, path });
  const role = { what: 'site directory', option: '--site' };
  it.each([
    [
      'EROFS',
      'open',
      /cannot write \/ro\/site\/x.json \(of the site directory \/ro\/site\): it is on a read-only file system, or choose another with --site \(EROFS\)/,
    ],
    ['ENOSPC', 'write', /no space left for the site directory \/ro\/site: free some space and try again \(ENOSPC\)/],
    [
      'EDQUOT',
      'write',
      /disk quota exceeded for the site directory \/ro\/site: free some space or raise the disk quota and try again \(EDQUOT\)/,
    ],
    ['EMFILE', 'open', /raise the open files limit \(ulimit -n\)/],
    ['ELOOP', 'stat', /too many symbolic links \(a loop\?\); fix the links, or choose another with --site \(ELOOP\)/],
    [
      'EIO',
      'read',
      /input\/output error on \/ro\/site\/x.json \(of the site directory \/ro\/site\): the disk or its file system failed; check them \(dmesg, fsck\), then try again \(EIO\)/,
    ],
    ['ENXIO', 'open', /the site directory \/ro\/site cannot be used: ENXIO: failed/],
  ])('%s', async (code, syscall, message) => {
    const error = await fileSystemError(errno(code, syscall, '/ro/site/x.json'), role, '/ro/site');
    expect(error).toBeInstanceOf(CitiesApiError);
    expect(error).toMatchObject({ exitCode: 1, message: expect.stringMatching(message) });
  });

  it('leaves an error that is not from the system as it is', async () => {
    const error = new TypeError('a bug');
    expect(await fileSystemError(error, role)).toBe(error);
  });
});
