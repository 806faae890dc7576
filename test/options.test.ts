import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../src/cli/option-values.js';
import type { CommandName } from '../src/cli/option-spec.js';
import { OPTIONS, optionsMarkdown, optionsOf, spellingName } from '../src/cli/options.js';
import { cli } from './cli-helpers.js';
import { compressPage } from '../src/store/compression.js';
import { LOG_FLUSH_MS } from '../src/http/request-log.js';
import { KIT, tempDir } from './helpers.js';
import { following, printed } from './started-process.js';
import { requireTool } from './tool-check.js';
import { tracedSpawn } from './traced-process.js';

const ROOT = resolve(import.meta.dirname, '..');
const STRACE = '/usr/bin/strace';
const run = promisify(execFile);
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-options-')));
afterAll(() => cleanup());

/** A project whose config file holds `config` (over a small, fast base), with the 11-city dataset as data/cities.csv. */
async function project(name: string, config: Record<string, unknown>): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, 'data'), { recursive: true });
  await copyFile(join(KIT, 'cities11.csv'), join(dir, 'data/cities.csv'));
  await copyFile(join(KIT, 'cities48.csv'), join(dir, 'data/other.csv'));
  await writeFile(
    join(dir, 'cities-api.config.json'),
    JSON.stringify({ orderings: 'default', pageSizes: [20], collation: 'codepoint', ...config }),
  );
  return dir;
}

/** `cities-api serve` started in `cwd`; resolves to the URL it says it listens at. */
function serveIn(cwd: string, until = / at (http:\/\/[^/\s]+)/): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/cities-api.js'), 'serve'], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise<string>((done, fail) => {
    const read = (d: Buffer) => {
      output += d;
      const m = until.exec(output);
      if (m) {
        child.kill('SIGTERM');
        done(m[1]!);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', () => fail(new Error(`serve stopped: ${output}`)));
  });
}

/** `cities-api serve` started in `cwd`, asked for `path` once: the status, and the lines printed after the start. */
async function serveAndGet(cwd: string, path: string): Promise<{ status: number; lines: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/cities-api.js'), 'serve'], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  try {
    const url = await new Promise<string>((done, fail) => {
      child.stdout.on('data', () => {
        const m = / at (http:\/\/[^/\s]+)/.exec(output);
        if (m) done(m[1]!);
      });
      child.on('exit', () => fail(new Error(`serve stopped: ${output}`)));
    });
    const started = output.length;
    const { status } = await fetch(`${url}${path}`);
    // The request log is written in batches, at the latest a flush interval after its first line.
    await new Promise((r) => setTimeout(r, LOG_FLUSH_MS + 300));
    return { status, lines: output.slice(started) };
  } finally {
    child.kill('SIGTERM');
  }
}

const built = async (dir: string, ...args: string[]) => {
  const run = await cli(dir, 'build', ...args);
  return {
    ...run,
    manifest: run.code === 0 ? await readFile(join(dir, 'dist/_cities-api/manifest.json'), 'utf8').catch(() => '') : '',
  };
};

describe('every config file key changes what the command does', () => {
  const cases: [string, Record<string, unknown>, (dir: string) => Promise<void>][] = [
    [
      'data',
      { data: 'data/other.csv' },
      async (dir) => expect((await built(dir)).stdout).toMatch(/^data\/other\.csv: 48 cities valid/),
    ],
    [
      'strict',
      { strict: true, data: 'data/extra.csv' },
      async (dir) => {
        const csv = (await readFile(join(dir, 'data/cities.csv'), 'utf8')).trimEnd().split(/\r?\n/);
        await writeFile(
          join(dir, 'data/extra.csv'),
          csv.map((line, i) => `${line},${i ? i : 'population'}`).join('\n'),
        );
        await writeFile(join(dir, 'lax.config.json'), JSON.stringify({ data: 'data/extra.csv' }));
        expect(await cli(dir, 'validate', '--config', 'lax.config.json')).toMatchObject({
          code: 0,
          stderr: expect.stringMatching(
            /^cities-api: warning: data\/extra\.csv:1: ignored unknown column "population"/,
          ),
        });
        expect(await built(dir)).toMatchObject({
          code: 1,
          stderr: expect.stringMatching(/\n {2}data\/extra\.csv:1: header: unknown column "population"/),
        });
      },
    ],
    [
      'site',
      { site: 'public' },
      async (dir) => {
        await built(dir);
        expect(existsSync(join(dir, 'public/_cities-api/manifest.json'))).toBe(true);
      },
    ],
    [
      'out',
      { out: 'older' },
      async (dir) => {
        await built(dir);
        expect(existsSync(join(dir, 'older/_cities-api/manifest.json'))).toBe(true);
      },
    ],
    [
      'baseUrl',
      { baseUrl: 'https://cities.example.org/v2' },
      async (dir) => expect((await built(dir)).manifest).toContain('"baseUrl": "https://cities.example.org/v2"'),
    ],
    [
      'collation',
      { collation: 'locale' },
      async (dir) => expect((await built(dir)).manifest).toContain('"collation": "locale"'),
    ],
    [
      'pageSizes',
      { pageSizes: [7] },
      async (dir) => {
        await built(dir);
        expect(existsSync(join(dir, 'dist/cities/default/7/2.json'))).toBe(true);
      },
    ],
    [
      'orderings',
      { orderings: ['default', '-name_fr'] },
      async (dir) => {
        await built(dir);
        expect(existsSync(join(dir, 'dist/cities/-name_fr/20/1.json'))).toBe(true);
      },
    ],
    [
      'compress',
      { compress: false },
      async (dir) => {
        await built(dir);
        expect(existsSync(join(dir, 'dist/cities/default/20/1.json.gz'))).toBe(false);
      },
    ],
    [
      'compression',
      { compression: 'best' },
      async (dir) => {
        expect((await built(dir)).manifest).toContain('"compression": "best"');
        const page = await readFile(join(dir, 'dist/cities/default/20/1.json'));
        expect(await readFile(join(dir, 'dist/cities/default/20/1.json.br'))).toEqual(compressPage(page, 'best')[1]);
      },
    ],
    [
      'builtFor',
      { builtFor: 'cloudflare' },
      async (dir) => {
        expect((await built(dir)).manifest).toContain('"host": "cloudflare"');
        expect(existsSync(join(dir, 'dist/_redirects'))).toBe(false);
        expect(existsSync(join(dir, 'dist/cities/default/20/1.json.gz'))).toBe(false);
      },
    ],
    [
      'durable',
      { durable: true },
      async (dir) => {
        // Seen in the system calls only (what a power loss would keep): the built pages are fdatasynced.
        if (!requireTool('strace', STRACE, 'apt-get install -y strace')) return;
        const log = join(dir, 'trace');
        await run(
          STRACE,
          [
            '-f',
            '-y',
            '-qq',
            '-e',
            'trace=fdatasync',
            '-o',
            log,
            process.execPath,
            join(ROOT, 'bin/cities-api.js'),
          ].concat(['build']),
          { cwd: dir },
        );
        expect(await readFile(log, 'utf8')).toMatch(/fdatasync\(\d+<[^>]*\/cities\/default\/20\/1\.json[^>]*>\) += 0/);
        // serve reads it too: its build (--data) of another site directory fdatasyncs that site's pages.
        const served = join(dir, 'served-trace');
        const args = [
          join(ROOT, 'bin/cities-api.js'),
          'serve',
          '--site',
          'served',
          '--data',
          'data/cities.csv',
          '--port',
          '0',
        ];
        const traced = await tracedSpawn(process.execPath, args, () => ['-y', '-e', 'trace=fdatasync', '-o', served], {
          cwd: dir,
        });
        const serving = following(traced.child, 'serve');
        try {
          await printed(serving, / at (http:\/\/[^/\s]+)/);
        } finally {
          await serving.stop();
          await traced.tracer;
        }
        expect(await readFile(served, 'utf8')).toMatch(
          /fdatasync\(\d+<[^>]*\/\.served\.staging-\d+\/cities\/default\/20\/1\.json>\) += 0/,
        );
      },
    ],
    [
      'liveUrl',
      { liveUrl: 'https://live.example.org' },
      async (dir) => {
        await built(dir);
        expect(await readFile(join(dir, 'dist/_redirects'), 'utf8')).toContain('https://live.example.org');
      },
    ],
    [
      'maxFiles',
      { maxFiles: 3 },
      async (dir) =>
        expect(await built(dir)).toMatchObject({ code: 2, stderr: expect.stringMatching(/above --max-files 3\b/) }),
    ],
    [
      'minFree',
      { minFree: '99999GB' },
      async (dir) => expect(await built(dir)).toMatchObject({ code: 2, stderr: expect.stringMatching(/--min-free/) }),
    ],
    [
      'lockWait',
      { lockWait: 1 },
      async (dir) => {
        // Held by another live process: the build waits a second for it at its swap, then says what to do.
        const holder = spawn('sleep', ['60']);
        try {
          await writeFile(join(dir, 'data/.cities.csv.lock'), `${holder.pid}\n`);
          expect(await built(dir)).toMatchObject({
            code: 1,
            stderr: expect.stringMatching(/\(pid \d+\) holds the lock .*--lock-wait.*\(waited 1 s\)/),
          });
        } finally {
          holder.kill();
        }
      },
    ],
    [
      'port',
      { port: 18_000 + (process.pid % 1000) },
      async (dir) => {
        await built(dir);
        expect(await serveIn(dir)).toBe(`http://127.0.0.1:${18_000 + (process.pid % 1000)}`);
      },
    ],
    [
      'host',
      { host: '127.0.0.2', port: 0 },
      async (dir) => {
        await built(dir);
        expect(await serveIn(dir)).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
      },
    ],
    [
      'workers',
      { workers: 2, port: 0 },
      async (dir) => {
        await built(dir);
        expect(await serveIn(dir, / with (\d+) workers/)).toBe('2');
      },
    ],
    [
      'quiet',
      { quiet: true, port: 0 },
      async (dir) => {
        await built(dir);
        expect(await serveAndGet(dir, '/cities/')).toEqual({ status: 200, lines: '' });
      },
    ],
    [
      'previewPages',
      { previewPages: false, port: 0 },
      async (dir) => {
        await built(dir);
        expect(await serveAndGet(dir, '/')).toEqual({
          status: 404,
          lines: expect.stringMatching(/"GET \/ HTTP\/1\.1" 404 /),
        });
      },
    ],
  ];

  it('the cases cover every key of the table', () => {
    expect(cases.map(([key]) => key).sort()).toEqual([...CONFIG_KEYS.keys()].sort());
  });

  it.each(cases)(
    '%s',
    async (key, config, check) => {
      await check(await project(`key-${key}`, config));
    },
    60_000,
  );

  it('a flag wins over the config file', async () => {
    const dir = await project('flag-wins', { pageSizes: [7] });
    await built(dir, '--page-sizes', '9');
    expect([
      existsSync(join(dir, 'dist/cities/default/9/1.json')),
      existsSync(join(dir, 'dist/cities/default/7/1.json')),
    ]).toEqual([true, false]);
  });
});

describe('--config FILE', () => {
  it('reads another file, its relative paths from its own directory, before or after the command', async () => {
    const dir = await project('explicit', {});
    await mkdir(join(dir, 'conf'));
    await writeFile(
      join(dir, 'conf/ci.json'),
      JSON.stringify({ data: '../data/other.csv', site: '../ci-site', orderings: 'default', pageSizes: [20] }),
    );
    for (const args of [
      ['--config', 'conf/ci.json', 'build'],
      ['build', '--config', 'conf/ci.json'],
    ]) {
      const run = await cli(dir, ...args);
      expect(run, run.stderr).toMatchObject({ code: 0 });
      expect(run.stdout).toMatch(/^data\/other\.csv: 48 cities valid[^]*built ci-site\//);
    }
  });

  it.each([
    ['a file that does not exist', 'nowhere.json', /--config nowhere\.json: no such file/],
    ['an unknown key', 'unknown.json', /unknown setting "prot" \(known: /],
    ['a key of the wrong type', 'wrong.json', /setting "port" has the wrong type \("8080"\), expected an integer$/m],
    [
      'a key of the wrong type, a list',
      'list.json',
      /setting "pageSizes" has the wrong type \(true\), expected a list of numbers$/m,
    ],
  ])('refuses %s (exit 2)', async (_, file, message) => {
    const dir = await project(`refused-${file}`, {});
    await writeFile(join(dir, 'unknown.json'), '{"prot": 1}');
    await writeFile(join(dir, 'wrong.json'), '{"port": "8080"}');
    await writeFile(join(dir, 'list.json'), '{"pageSizes": true}');
    expect(await cli(dir, 'build', '--config', file)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(message),
    });
  });
});

// A dataset may start with a byte order mark (UTF-8 with BOM, as Windows Notepad and Excel save it); so may the config
// file beside it: it was refused, "Unexpected token '\ufeff'", quoting a character no editor shows.
describe('a config file saved with a byte order mark', () => {
  it.each([
    ['UTF-8 with BOM', '\ufeff{"pageSizes": [20]}'],
    ['without', '{"pageSizes": [20]}'],
  ])('%s is read', async (name, text) => {
    const dir = await project(`bom-${name.length}`, {});
    await writeFile(join(dir, 'cities-api.config.json'), text);
    const run = await cli(dir, 'validate');
    expect(run, run.stderr).toMatchObject({ code: 0 });
  });
});

describe('the option table makes --help and the README', () => {
  it.each(['build', 'validate', 'serve', 'config nginx', 'config cloudfront'] as CommandName[])(
    '%s --help lists each of its options',
    async (command) => {
      const run = await cli(root, ...command.split(' '), '--help');
      for (const option of optionsOf(command)) expect(run.stdout).toContain(spellingName(option.flag));
    },
  );

  it('the README holds the table as the option table renders it', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    expect(
      readme.slice(
        readme.indexOf('<!-- options -->') + '<!-- options -->\n'.length,
        readme.indexOf('\n<!-- /options -->'),
      ),
    ).toBe(optionsMarkdown());
  });

  it('each entry is for at least one command and has help', () => {
    expect(OPTIONS.filter((o) => !o.commands.length || !o.help)).toEqual([]);
  });
});
