import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/main.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { KIT, tempDir } from './helpers.js';
import { freePort } from './nginx-tls.js';
import { rawRequest, ROOT } from './serve-helpers.js';
import { following, whenReady } from './started-process.js';

// The CLI's stdout and stderr as a real process has them: a file or a pipe, which tell of a failed
// write with an 'error' event a tick later. Unheard, it ended the process with "Unhandled 'error'
// event" and Node's stack trace: `--version > /dev/full`, `config nginx | head`, serve's log.

const BIN = join(ROOT, 'bin/cities-api.js');
const DEV_FULL = '/dev/full';
const TOKEN = 'test-token-0123456789';

let root: string;
let cleanup: () => Promise<void>;
let site: string;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-output-errors-'));
  site = join(root, 'site');
  const built = await cli(['build', '--data', join(KIT, 'cities11.csv'), '--site', site, ...SMALL], 'pipe');
  expect(built.code).toBe(0);
});
afterAll(() => cleanup());

/** One ordering, one page size: a site of a few files. */
const SMALL = ['--collation', 'codepoint', '--orderings', 'default', '--page-sizes', '10'];

/** Where a stream goes: a pipe read to its end, /dev/full (opened for writing), or a pipe closed before the CLI writes (EPIPE). */
type Sink = 'pipe' | 'full' | 'closed';

/** Spawns the CLI with stdout and stderr going to `sinks`; what it printed on those read (a pipe's). */
function start(args: readonly string[], out: Sink, err: Sink = 'pipe', env: NodeJS.ProcessEnv = {}) {
  const full = openSync(DEV_FULL, 'w');
  const to = (sink: Sink) => (sink === 'full' ? full : 'pipe');
  try {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', to(out), to(err)],
    });
    // Closed at once: the CLI starts for tens of milliseconds before it writes.
    if (out === 'closed') child.stdout!.destroy();
    if (err === 'closed') child.stderr!.destroy();
    return child;
  } finally {
    closeSync(full);
  }
}

async function cli(args: readonly string[], out: Sink, err: Sink = 'pipe') {
  const child = start(args, out, err);
  let stdout = '';
  let stderr = '';
  if (out === 'pipe') child.stdout!.on('data', (d) => (stdout += d));
  if (err === 'pipe') child.stderr!.on('data', (d) => (stderr += d));
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  return { code: code ?? signal, stdout, stderr };
}

const noSpace = (what: string) => `cities-api: ${what}: no space left on device; `;

describe.each([['--version'], ['--help'], ['config nginx']])('cities-api %s', (command) => {
  const args = () => [...command.split(' '), ...(command.startsWith('config') ? ['--site', site] : [])];

  it('into a full disk (stdout /dev/full): one line on stderr naming stdout and what to do, exit 1', async () => {
    expect(await cli(args(), 'full')).toEqual({
      code: 1,
      stdout: '',
      stderr: `${noSpace('cannot write the output to stdout')}free some space and try again (ENOSPC)\n`,
    });
  });

  it('into a pipe its reader closed (EPIPE, as `| head`): nothing said, exit 0', async () => {
    expect(await cli(args(), 'closed')).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe("a build's stderr that fails (its warning of no --base-url): the build goes on to its end", () => {
  const build = () => ['build', '--data', join(KIT, 'cities11.csv'), '--site', join(root, 'site-stderr'), ...SMALL];

  it('a full disk: its report on stdout, exit 1 (nothing can be said where errors go)', async () => {
    const { code, stdout } = await cli(build(), 'pipe', 'full');
    expect(stdout).toMatch(/^built site-stderr\/: /m);
    expect(code).toBe(1);
  });

  it('a pipe its reader closed: its report on stdout, exit 0', async () => {
    const { code, stdout } = await cli(build(), 'pipe', 'closed');
    expect(stdout).toMatch(/^built site-stderr\/: /m);
    expect(code).toBe(0);
  });
});

describe('serve --writable whose stdout fails: it goes on serving and taking POSTs, its log stopped with one line on stderr', () => {
  it.each<[Sink, number, string]>([
    [
      'full',
      1,
      `${noSpace('cannot write to stdout')}the server goes on, logging nothing more (its requests, its builds, POSTs that failed); free some space and try again (ENOSPC)\n`,
    ],
    [
      'closed',
      0,
      'cities-api: cannot write to stdout: broken pipe; the server goes on, logging nothing more (its requests, its builds, POSTs that failed) (EPIPE)\n',
    ],
  ])('stdout %s: exit %i once stopped, every acknowledged city in the dataset', async (sink, status, said) => {
    const dir = join(root, `serve-${sink}`);
    await mkdir(dir);
    const data = join(dir, 'cities.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const args = ['serve', join(dir, 'site'), '--data', data, '--port', String(port), '--writable', ...SMALL];
    const child = start(args, sink, 'pipe', { CITIES_API_TOKEN: TOKEN });
    const server = following(child, 'serve');
    try {
      const answer = () => rawRequest(`${url}/cities/?page_size=100`, { fresh: true }).catch(() => undefined);
      await whenReady(server, async () => ((await answer())?.status === 200 ? true : undefined), 100);
      const created = await rawRequest(`${url}/cities/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}` },
        body: JSON.stringify(Object.fromEntries(NAME_FIELDS.map((f) => [f, 'Zorn']))),
      });
      expect(created.status).toBe(201);
      // Past the request log's flush (1 s): its lines are written, and dropped, while it serves.
      await new Promise((done) => setTimeout(done, 1500));
      expect(String((await answer())!.body)).toContain('"name_en":"Zorn"');
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      expect((await exited)[0]).toBe(status);
    } finally {
      await server.stop();
    }
    expect(server.output()).toBe(said);
    expect(await readFile(data, 'utf8')).toMatch(/,Zorn,/);
  });
});

it('a pipe whose reader leaves once the run is over (its last write still under way): heard, no uncaught error', async () => {
  let failLate: () => void = () => {};
  const stdout = new Writable({
    write(_chunk, _encoding, done) {
      failLate = () => done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' }));
    },
  });
  const stderr = new Writable({ write: (_chunk, _encoding, done) => done() });
  expect(await runMain({ rawArgs: ['--version'], stdout, stderr })).toBe(0);
  expect(stdout.writableLength).toBeGreaterThan(0);
  failLate();
  // Told a tick later (unheard, an uncaught error); not waited for with events.once, which would hear it.
  await new Promise((done) => setImmediate(done));
  expect(stdout.errored).toMatchObject({ code: 'EPIPE' });
});
