import { execFile } from 'node:child_process';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manyCities, writeDataset } from './crash-helpers.js';
import { KIT, tempDir } from './helpers.js';
import { createAt, ROOT, SMALL_SITE, servedAt } from './serve-helpers.js';
import { following, printed, whenReady } from './started-process.js';
import { requireTool } from './tool-check.js';
import { STRACE, tracedSpawn } from './traced-process.js';

// serve's own builds are durable when serve is asked --durable, as build's are: a writable
// server's catch-up build after a POST syncs the pages it writes before its swap (strace), and
// without --durable syncs none (the POST's city is synced to the dataset's log either way).

const CLI = join(ROOT, 'bin/cities-api.js');
const TOKEN = 'durable-serve-token';
const run = promisify(execFile);
const available = requireTool('strace', STRACE, 'apt-get install -y strace');

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-durable-serve-')));
afterAll(() => cleanup?.());

describe.skipIf(!available)("serve --writable's catch-up build after a POST (strace)", () => {
  it.each<[string, string[], boolean]>([
    ['with --durable: the pages it rewrote are fdatasynced, the parent fsynced after the swap', ['--durable'], true],
    ['without: nothing of the site is synced', [], false],
  ])('%s', async (_, args, durable) => {
    const dir = join(root, durable ? 'durable' : 'plain');
    const data = join(dir, 'cities.csv');
    const site = join(dir, 'site');
    await run('mkdir', ['-p', dir]);
    await copyFile(join(KIT, 'cities11.csv'), data);
    // Built beforehand, as durable as serve's builds: serve's first build finds it up to date and writes nothing.
    await run(process.execPath, [CLI, 'build', '--data', data, '--site', site, ...SMALL_SITE, ...args], { cwd: dir });
    const log = join(dir, 'trace');
    const { child, tracer } = await tracedSpawn(
      process.execPath,
      [CLI, 'serve', site, '--data', data, '--port', '0', '--writable', ...SMALL_SITE, ...args],
      () => ['-y', '-e', 'trace=fdatasync,fsync', '-o', log],
      { cwd: dir, env: { ...process.env, CITIES_API_TOKEN: TOKEN } },
    );
    const starting = following(child, 'serve');
    try {
      const url = await printed(starting, / at (http:\/\/[^/\s]+)/);
      expect((await createAt(url, TOKEN, 'Synced')).status).toBe(201);
      // The catch-up build has swapped its site in once a page of it holds the new city (the 12th).
      const pages = ['1', '2'].map((n) => join(site, `cities/default/10/${n}.json`));
      const holds = async (page: string) => (await readFile(page, 'utf8').catch(() => '')).includes('Synced');
      await whenReady(starting, async () => (await Promise.all(pages.map(holds))).includes(true) || undefined, 50);
    } finally {
      await starting.stop();
      await tracer;
    }
    const trace = await readFile(log, 'utf8');
    const staging = `${dir}/.site.staging-${child.pid}`;
    const synced = (call: string, path: string) => new RegExp(`${call}\\(\\d+<${path}>\\) += 0`).test(trace);
    expect({
      page: synced('fdatasync', `${staging}/cities/default/10/\\d\\.json`),
      anyOfTheSite: new RegExp(`fdatasync\\(\\d+<${staging}/`).test(trace),
      // (Without --durable the directory is fsynced too, as the dataset's: it holds the dataset file.)
      parentSynced: durable ? synced('fsync', dir) : undefined,
    }).toEqual({ page: durable, anyOfTheSite: durable, parentSynced: durable || undefined });
  });
});

describe.skipIf(!available)('serve --watch --durable: a rebuild whose sync fails after its swap (strace)', () => {
  it('is said, and the new site it put in place is the one answered', async () => {
    const dir = join(root, 'watch');
    const data = join(dir, 'data/cities.json');
    const out = join(dir, 'out');
    const site = join(out, 'site');
    await run('mkdir', ['-p', join(dir, 'data'), out]);
    await writeDataset(data, manyCities(20, 'Watched'));
    // Not a preview (a base URL given): nothing but the builds' swaps syncs the site's parent.
    const settings = [...SMALL_SITE, '--base-url', 'http://localhost:8080'];
    // Durable: serve's first build finds it up to date (after a build without --durable it would sync it all).
    await run(process.execPath, [CLI, 'build', '--data', data, '--site', site, ...settings, '--durable'], { cwd: dir });
    const { child, tracer } = await tracedSpawn(
      process.execPath,
      [CLI, 'serve', site, '--data', data, '--port', '0', '--watch', '--durable', ...settings],
      () => ['-P', out, '-o', '/dev/null', '-e', 'trace=fsync', '-e', 'inject=fsync:error=EIO:when=1'],
      { cwd: dir },
    );
    const starting = following(child, 'serve');
    try {
      const url = await printed(starting, / at (http:\/\/[^/\s]+)/);
      await writeDataset(data, manyCities(20, 'Rewatched'));
      // Said as what it is: the change rebuilt and served, maybe not durable (not "was not used").
      expect(await printed(starting, /cities\.json changed(.*)/)).toMatch(
        /^: the new site .* is published, but it may not be durable: syncing .*input\/output error/,
      );
      // The site the failed build put in place is loaded: its cities answered, not the old ones.
      expect((await servedAt(url)).filter((name) => name.startsWith('Rewatched')).length).toBe(20);
    } finally {
      await starting.stop();
      await tracer;
    }
  });
});

describe.skipIf(!available)('serve --writable --durable: a catch-up whose sync fails after its swap (strace)', () => {
  it('says what happened in order: published, maybe not durable; not "behind" nor "retrying" what is published', async () => {
    const dir = join(root, 'writable-failed');
    const data = join(dir, 'data/cities.csv');
    const out = join(dir, 'out');
    const site = join(out, 'site');
    await run('mkdir', ['-p', join(dir, 'data'), out]);
    await copyFile(join(KIT, 'cities11.csv'), data);
    const settings = [...SMALL_SITE, '--base-url', 'http://localhost:8080'];
    // Durable: serve's first build finds it up to date; the first sync of `out` is the catch-up's, after its swap.
    await run(process.execPath, [CLI, 'build', '--data', data, '--site', site, ...settings, '--durable'], { cwd: dir });
    const { child, tracer } = await tracedSpawn(
      process.execPath,
      [CLI, 'serve', site, '--data', data, '--port', '0', '--writable', '--durable', ...settings],
      () => ['-P', out, '-o', '/dev/null', '-e', 'trace=fsync', '-e', 'inject=fsync:error=EIO:when=1'],
      { cwd: dir, env: { ...process.env, CITIES_API_TOKEN: TOKEN } },
    );
    const starting = following(child, 'serve');
    let said = '';
    child.stderr?.on('data', (d: Buffer) => void (said += d));
    child.stdout?.on('data', (d: Buffer) => void (said += d));
    try {
      const url = await printed(starting, / at (http:\/\/[^/\s]+)/);
      expect((await createAt(url, TOKEN, 'Unsynced')).status).toBe(201);
      await printed(starting, /(published, but it may not be durable)/);
      // A moment for what would follow it (a retry's line, a second catch-up).
      await new Promise((r) => setTimeout(r, 2500));
      expect((await servedAt(url)).filter((name) => name === 'Unsynced').length).toBe(1);
    } finally {
      await starting.stop();
      await tracer;
    }
    const lines = said.split('\n').filter((line) => /published|behind|retrying|catch-up/.test(line));
    expect(lines.length, said).toBe(1);
    expect(lines[0]).toMatch(/published, but it may not be durable: syncing .*input\/output error/);
    expect(lines[0]).not.toMatch(/behind the data|retrying/);
    // The site holds the city: it is folded into the dataset file, not built again.
    expect(await readFile(data, 'utf8')).toContain('Unsynced');
  });
});
