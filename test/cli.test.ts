import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../src/site/version.js';
import { cloudFrontFunction } from '../src/hosts/cloudfront.js';
import { cloudFrontStack } from '../src/hosts/cloudfront-stack.js';
import { specOf } from '../src/site/manifest.js';
import type { SiteSpec } from '../src/site/spec.js';
import { readManifest } from '../src/store/manifest-file.js';
import { nginxConfig } from '../src/hosts/nginx.js';
import { cli } from './cli-helpers.js';
import { treeDifferences } from './crash-helpers.js';
import { readTree, tempDir } from './helpers.js';

const ROOT = join(import.meta.dirname, '..');
let cwd: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: cwd, cleanup } = await tempDir('cities-cli-'));
  await cp(join(ROOT, 'data'), join(cwd, 'data'), { recursive: true });
});
afterAll(() => cleanup());

const firstPage = async (site = 'dist', file = 'cities/default/default/1.json') =>
  JSON.parse(await readFile(join(cwd, site, file), 'utf8')) as {
    count: number;
    next: string;
    results: { id: number }[];
  };

describe('a site built without a base URL says so (a warning, also in CI: the build still runs)', () => {
  const WARNING =
    'warning: no --base-url given: the site\'s next/previous links point at http://localhost:8080, which suits a local preview only; to deploy it, build with --base-url https://YOUR-HOST/PATH (or "baseUrl" in cities-api.config.json)';
  const withEnv = async <T>(env: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> => {
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k];
    try {
      return await body();
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  };
  it.each([
    [
      'no --base-url: a warning, links on localhost',
      [],
      {},
      `cities-api: ${WARNING}\n`,
      'http://localhost:8080/cities/?page=2',
    ],
    [
      'no --base-url with CI=true: the same warning, the build done',
      [],
      { CI: 'true' },
      `cities-api: ${WARNING}\n`,
      'http://localhost:8080/cities/?page=2',
    ],
    [
      'no --base-url in GitHub Actions: an annotation on the run',
      [],
      { CI: 'true', GITHUB_ACTIONS: 'true' },
      `::warning title=cities-api::${WARNING.slice('warning: '.length)}\n`,
      'http://localhost:8080/cities/?page=2',
    ],
    [
      '--base-url given: no warning',
      ['--base-url', 'https://example.org/api'],
      { CI: 'true' },
      '',
      'https://example.org/api/cities/?page=2',
    ],
    [
      '--base-url given as the default itself: no warning (a choice)',
      ['--base-url', 'http://localhost:8080'],
      {},
      '',
      'http://localhost:8080/cities/?page=2',
    ],
    [
      'baseUrl in the config file: no warning',
      ['--config', 'base-url.config.json'],
      {},
      '',
      'https://config.example.org/cities/?page=2',
    ],
  ])('%s', async (_, args, env, stderr, next) => {
    await writeFile(join(cwd, 'base-url.config.json'), JSON.stringify({ baseUrl: 'https://config.example.org' }));
    const run = await withEnv({ GITHUB_ACTIONS: undefined, ...env }, () =>
      cli(cwd, 'build', '--out', 'dist-base', '--orderings', 'default', '--page-sizes', '20', ...args),
    );
    expect(run).toMatchObject({ code: 0, stderr });
    expect((await firstPage('dist-base')).next).toBe(next);
  });
});

describe('cities-api build, as a CI job runs it', () => {
  it('with no arguments builds dist/ from data/cities.csv', async () => {
    const run = await cli(cwd, 'build');
    expect(run).toMatchObject({ code: 0, stderr: expect.stringMatching(/^cities-api: warning: no --base-url given/) });
    expect(run.stdout).toMatch(
      /^data\/cities\.csv: 48 cities valid; building 693 pages \(2121 files, about [\d.]+ MB of JSON \+ about [\d.]+ MB of \.gz\/\.br\)\nbuilt dist\/: 2121 files: 2121 written, 0 unchanged, 0 removed in [\d.]+ s\n$/,
    );
    const page = await firstPage();
    expect(page.count).toBe(48);
    expect(page.next).toBe('http://localhost:8080/cities/?page=2');
  });

  it('a rebuild with no change writes nothing and keeps every file as it was', async () => {
    const before = await stat(join(cwd, 'dist/cities/name_en/20/2.json'));
    const run = await cli(cwd, 'build');
    expect(run.stdout).toMatch(
      /its files are as built: nothing to write \(--force rewrites every file\)\n.*2121 files: 0 written, 2121 unchanged, 0 removed/,
    );
    const after = await stat(join(cwd, 'dist/cities/name_en/20/2.json'));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('--force rewrites every file, reusing nothing of the old site (new inodes, same bytes)', async () => {
    const before = await readTree(join(cwd, 'dist'));
    const inode = (await stat(join(cwd, 'dist/cities/name_en/20/2.json'))).ino;
    const run = await cli(cwd, 'build', '--force');
    expect(run.stdout).toMatch(/building 693 pages[^]*2121 files: 2121 written, 0 unchanged, 0 removed/);
    expect((await stat(join(cwd, 'dist/cities/name_en/20/2.json'))).ino).not.toBe(inode);
    expect(treeDifferences(before, await readTree(join(cwd, 'dist')))).toEqual([]);
  });

  it('refuses a site above --max-files before writing, naming what to drop', async () => {
    const before = await readTree(join(cwd, 'dist'));
    const run = await cli(cwd, 'build', '--max-files', '1000', '--base-url', 'https://example.org');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /2,121 files, above --max-files 1,000\. To fit: precompute at most 15 of the 33 orderings \(e\.g\. --orderings default,name_en,-name_en,/,
    );
    expect(run.stderr).toMatch(/--page-sizes 100 \(933 files\)[^]*--compression none[^]*Nothing was written/);
    const after = await readTree(join(cwd, 'dist'));
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    expect((await readManifest(join(cwd, 'dist')))!.settings.baseUrl).toBe('http://localhost:8080');
  });

  it('is deterministic: another build of the same input is byte-identical', async () => {
    expect((await cli(cwd, 'build', '--out', 'dist-again')).code).toBe(0);
    const a = await readTree(join(cwd, 'dist'));
    const b = await readTree(join(cwd, 'dist-again'));
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [path, bytes] of a) expect(bytes.equals(b.get(path)!), path).toBe(true);
  });

  it('removes stale files when page sizes shrink, and says how many', async () => {
    const run = await cli(cwd, 'build', '--out', 'dist-again', '--page-sizes', '10,20');
    expect(run.stdout).toMatch(/1725 files: \d+ written, \d+ unchanged, 396 removed/);
    await expect(stat(join(cwd, 'dist-again/cities/name_en/50/1.json'))).rejects.toThrow(/ENOENT/);
  });

  it('creates missing parent directories of --out', async () => {
    expect(
      (await cli(cwd, 'build', '--out', 'deep/er/site', '--orderings', 'default', '--page-sizes', '10')).code,
    ).toBe(0);
    expect((await firstPage('deep/er/site')).count).toBe(48);
  });

  it('--orderings builds only the orderings asked for', async () => {
    const run = await cli(cwd, 'build', '--out', 'dist-some', '--orderings', '-name_ar,default', '--page-sizes', '20');
    expect(run.stdout).toMatch(/building 22 pages \(108 files, /);
    await expect(stat(join(cwd, 'dist-some/cities/-name_ar/20/3.json'))).resolves.toBeTruthy();
    await expect(stat(join(cwd, 'dist-some/cities/name_ar'))).rejects.toThrow(/ENOENT/);
  });

  it('uses --base-url with a path in every link', async () => {
    // One ordering, one size: the links of every page come from the same base URL.
    await cli(
      cwd,
      'build',
      '--out',
      'dist-base',
      '--orderings',
      'default',
      '--page-sizes',
      '20',
      '--base-url',
      'https://example.org/api/v1/',
    );
    expect((await firstPage('dist-base')).next).toBe('https://example.org/api/v1/cities/?page=2');
  });

  it('reads defaults from cities-api.config.json; flags win over it', async () => {
    await writeFile(
      join(cwd, 'cities-api.config.json'),
      JSON.stringify({ out: 'site', orderings: ['default'], pageSizes: [25], baseUrl: 'https://cfg.example' }),
    );
    try {
      expect((await cli(cwd, 'build')).code).toBe(0);
      const second = (await firstPage('site', 'cities/default/25/2.json')) as unknown as {
        previous: string;
        next: null;
      };
      expect([second.previous, second.next]).toEqual(['https://cfg.example/cities/?page_size=25', null]);
      expect((await cli(cwd, 'build', '--base-url', 'https://flag.example')).code).toBe(0);
      expect((await firstPage('site')).next).toBe('https://flag.example/cities/?page=2');
    } finally {
      await writeFile(join(cwd, 'cities-api.config.json'), '{}');
    }
  });
});

describe('a bad dataset is refused and the old site stays as it was', () => {
  it.each([
    ['an empty name', 'id,name_ar', (csv: string) => csv.replace(/^(\d+),[^,]+,/m, '$1,,')],
    [
      'a coordinate out of range',
      'longitude',
      (csv: string) =>
        csv
          .split('\n')
          .map((l, i) => (i === 5 ? l.replace(/,(-?[\d.]+),(-?[\d.]+),(true|false),/, ',200,$2,$3,') : l))
          .join('\n'),
    ],
  ])('%s', async (_, field, corrupt) => {
    const good = await readFile(join(cwd, 'data/cities.csv'), 'utf8');
    await writeFile(join(cwd, 'bad.csv'), corrupt(good));
    const before = await readTree(join(cwd, 'dist'));
    const run = await cli(cwd, 'build', '--data', 'bad.csv');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^cities-api: invalid dataset .*bad\.csv \(1 problem; nothing was written\):\n {2}.*bad\.csv:\d+: field /,
    );
    expect(run.stderr).toContain(
      field === 'longitude' ? 'field longitude, value "200": must be between -180 and 180' : 'must not be empty',
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    const after = await readTree(join(cwd, 'dist'));
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, bytes] of before) expect(bytes.equals(after.get(path)!), path).toBe(true);
  });

  it('validate lists the problems and exits 1', async () => {
    await writeFile(join(cwd, 'bad.json'), JSON.stringify([{ id: 1 }]));
    const run = await cli(cwd, 'validate', '--data', 'bad.json');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('bad.json:1: record 0 (id 1): field name_ar, value missing: is missing');
  });

  it('validate accepts the bundled dataset', async () => {
    expect(await cli(cwd, 'validate')).toEqual({ code: 0, stdout: 'data/cities.csv: 48 cities, valid\n', stderr: '' });
  });

  it('validate counts one city as one city', async () => {
    const [header, first] = (await readFile(join(cwd, 'data/cities.csv'), 'utf8')).split('\n');
    await writeFile(join(cwd, 'one.csv'), `${header}\n${first}\n`);
    expect(await cli(cwd, 'validate', '--data', 'one.csv')).toEqual({
      code: 0,
      stdout: 'one.csv: 1 city, valid\n',
      stderr: '',
    });
  });

  it('refuses to replace a directory that is not a cities-api site', async () => {
    await mkdir(join(cwd, 'mine'));
    await writeFile(join(cwd, 'mine/notes.txt'), 'keep me');
    const run = await cli(cwd, 'build', '--out', 'mine');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/mine exists and is not a cities-api site/);
    expect(await readFile(join(cwd, 'mine/notes.txt'), 'utf8')).toBe('keep me');
  });
});

describe('cities-api config', () => {
  it.each([
    [
      'nginx',
      ['--live-url', 'http://127.0.0.1:9000'],
      (settings: SiteSpec) => nginxConfig(settings, { liveUrl: 'http://127.0.0.1:9000', site: join(cwd, 'dist') }),
    ],
    ['cloudfront', [], (settings: SiteSpec) => cloudFrontFunction(settings)],
    [
      'cloudfront',
      ['--live-url', 'https://live.example.org'],
      (settings: SiteSpec) => cloudFrontFunction({ ...settings, liveUrl: 'https://live.example.org' }),
    ],
    ['cloudfront', ['--stack'], (settings: SiteSpec) => cloudFrontStack(settings)],
    [
      'cloudfront',
      ['--stack', '--live-url', 'https://live.example.org'],
      (settings: SiteSpec) => cloudFrontStack({ ...settings, liveUrl: 'https://live.example.org' }),
    ],
  ])('%s %j prints the config of the built site', async (host, args, expected) => {
    const run = await cli(cwd, 'config', host, ...args);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(expected(specOf((await readManifest(join(cwd, 'dist')))!)));
  });

  // The function alone wrote an IP address as its origin (only --stack refused it): one rule for both.
  it.each(
    [
      [
        'an IP address: CloudFront origins need a DNS name',
        'http://127.0.0.1:8080',
        /the live URL http:\/\/127\.0\.0\.1:8080 has no DNS name \(127\.0\.0\.1\)/,
      ],
      [
        'an IPv6 address: CloudFront origins need a DNS name',
        'http://[::1]:8080',
        /the live URL http:\/\/\[::1\]:8080 has no DNS name \(\[::1\]\)/,
      ],
      [
        'a query',
        'https://live.example.org/?a=1',
        /invalid live URL "https:\/\/live\.example\.org\/\?a=1": it must not carry a query/,
      ],
    ].flatMap(([what, liveUrl, message]) =>
      [[], ['--stack']].map((args) => [what, args, liveUrl, message] as [string, string[], string, RegExp]),
    ),
  )('config cloudfront %s (%j): exit 2, nothing on stdout', async (_, args, liveUrl, message) => {
    const run = await cli(cwd, 'config', 'cloudfront', ...args, '--live-url', liveUrl);
    expect([run.code, run.stdout, run.stderr]).toEqual([2, '', expect.stringMatching(message)]);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('a directory without a site is a clear error', async () => {
    const run = await cli(cwd, 'config', 'nginx', '--site', 'nowhere');
    expect([run.code, run.stderr]).toEqual([
      1,
      expect.stringMatching(/nowhere holds no cities-api site: run cities-api build first/),
    ]);
  });
});

describe('usage', () => {
  it.each([
    ['unknown option', ['build', '--bogus'], /unknown option '--bogus'/],
    ['unknown command', ['deploy'], /unknown command 'deploy'/],
    ['bad collation', ['build', '--collation', 'klingon'], /Allowed choices are locale, codepoint/],
    ['bad page sizes', ['build', '--page-sizes', '10,0'], /invalid page size "0"/],
    ['bad orderings', ['build', '--orderings', 'name_en,id'], /invalid ordering "id"/],
    ['bad base URL', ['build', '--base-url', 'example.org'], /invalid base URL "example.org"/],
    ['base URL with a query', ['build', '--base-url', 'http://x/?a=1'], /must not carry a query/],
    // An empty --host listened on every address and printed http://:PORT, on which serve --data then built its links:
    // 'invalid base URL "http://:PORT"', of a base URL the user never gave.
    ['an empty host', ['serve', '--host', '', '--port', '0'], /^cities-api: invalid --host "": expected an address/],
    ['a blank host', ['serve', '--host', ' ', '--port', '0'], /^cities-api: invalid --host " ": expected an address/],
  ])('%s exits 2', async (_, args, message) => {
    const run = await cli(cwd, ...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it.each([['--help'], ['build', '--help']])('%s exits 0', async (...args) => {
    const run = await cli(cwd, ...args);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Usage: cities-api/);
  });

  it('--version prints the version', async () => {
    expect(await cli(cwd, '--version')).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });
});

describe('bin/cities-api.js', () => {
  const run = (...args: string[]) =>
    promisify(execFile)(process.execPath, [join(ROOT, 'bin/cities-api.js'), ...args], { cwd }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it('runs the compiled CLI with the same exit codes', async () => {
    expect((await run('validate')).code).toBe(0);
    expect((await run('validate', '--data', 'bad.json')).code).toBe(1);
    expect((await run('build', '--nope')).code).toBe(2);
  });
});
