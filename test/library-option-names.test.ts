import { cp } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, CitiesApiError, SAMPLE_DATASET, serve, type BuildOptions, type ServeOptions } from '../src/index.js';
import { cli } from './cli-helpers.js';
import { tempDir } from './helpers.js';

// A message that names an option names it as its reader gave it: a library caller reads the name
// its call used (serve({ port }): `port`; build()'s site directory: `out`), the CLI's user the flag
// (--port, --site), both from one wording (core/errors.ts), the CLI's from its option table.

let root: string;
let data: string;
let site: string;
let cleanup: () => Promise<void>;
let taken: Server;
let takenPort: number;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-option-names-'));
  data = join(root, 'cities.csv');
  await cp(SAMPLE_DATASET, data);
  site = join(root, 'site');
  await build({ data, out: site, orderings: ['default'], pageSizes: [10], compression: 'none' });
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
  await cleanup();
});

/** `run` with CITIES_API_TOKEN set to `token` (unset: as it is), then as it was. */
async function withToken<T>(token: string | undefined, run: () => Promise<T>): Promise<T> {
  const was = process.env.CITIES_API_TOKEN;
  if (token !== undefined) process.env.CITIES_API_TOKEN = token;
  try {
    return await run();
  } finally {
    if (was === undefined) delete process.env.CITIES_API_TOKEN;
    else process.env.CITIES_API_TOKEN = was;
  }
}

/** More bytes than any disk has free (1 PB). */
const NO_SPACE = 10 ** 15;

describe('serve(): a message names each option as serve() takes it', () => {
  it.each<[string, () => ServeOptions, string]>([
    [
      'writable without data',
      () => ({ dir: site, writable: true, port: 0 }),
      '`writable` needs a dataset file (`data`)',
    ],
    ['watch without data', () => ({ dir: site, watch: true, port: 0 }), '`watch` needs a dataset file (`data`)'],
    [
      'writable on a dataset that is a directory',
      () => ({ dir: site, data: root, writable: true, token: 'a-token-long-enough-0123456789', port: 0 }),
      '`writable` needs the dataset',
    ],
    [
      'writable without a token',
      () => ({ dir: site, data, writable: true, port: 0 }),
      '`writable` needs a token: set `token`',
    ],
    [
      'a token no client could send',
      () => ({ dir: site, data, writable: true, token: 'two words', port: 0 }),
      '`token` contains " "',
    ],
    ['workers 0', () => ({ dir: site, workers: 0, port: 0 }), '`workers` must be a whole number from 1 to 1024'],
    [
      'a port in use',
      () => ({ dir: site, port: takenPort, host: '127.0.0.1' }),
      'already in use; choose another with `port`',
    ],
    ['a host not of this machine', () => ({ dir: site, port: 0, host: '192.0.2.1' }), 'choose one it has with `host`'],
    [
      'a base URL the site was not built for',
      () => ({ dir: site, port: 0, baseUrl: 'https://other.example.org' }),
      'rebuild it with `baseUrl` https://other.example.org, or pass `data` to build it now',
    ],
  ])('%s', async (_, options, message) => {
    const error = await serve(options()).then(
      async (server) => {
        await server.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CitiesApiError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).not.toMatch(/--|\u0000/);
  });
});

describe('build(): a message names each option as build() takes it', () => {
  it.each<[string, () => BuildOptions, string]>([
    ['minFree beyond the disk', () => ({ data, out: join(root, 'no-room'), minFree: NO_SPACE }), 'free (`minFree`)'],
    [
      'minFree beyond the disk: the advice',
      () => ({ data, out: join(root, 'no-room'), minFree: NO_SPACE }),
      'build on another filesystem (`out`), precompute fewer orderings or page sizes, or lower `minFree`',
    ],
    [
      'an unknown host',
      () => ({ data, out: join(root, 'no-host'), host: 'nowhere' as never }),
      'invalid `host` "nowhere"',
    ],
    [
      'a site directory under a regular file',
      () => ({ data, out: join(data, 'site') }),
      'is a file, not a directory; move it away, or choose another with `out`',
    ],
    [
      'a host that compresses by itself, and a compression',
      () => ({ data, out: join(root, 'for-host'), host: 'cloudflare', compression: 'best' }),
      '`host` cloudflare builds no .gz/.br (cloudflare compresses by itself), and `compression` best asks for them: drop `compression`',
    ],
    [
      'compress false, and a compression',
      () => ({ data, out: join(root, 'no-compress'), compress: false, compression: 'best' }),
      'give only `compression` (none, fast or best)',
    ],
  ])('%s', async (_, options, message) => {
    const error = await build(options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).not.toMatch(/--|\u0000/);
  });
});

describe('the CLI: the same messages name the flags, from its option table', () => {
  it.each<[string, () => string[], string, string?]>([
    [
      'serve --watch without --data',
      () => ['serve', '--site', site, '--watch', '--port', '0'],
      '--watch needs a dataset file (--data)',
    ],
    [
      'serve --writable without --data',
      () => ['serve', '--site', site, '--writable', '--port', '0'],
      '--writable needs a dataset file (--data)',
    ],
    [
      'serve on a port in use',
      () => ['serve', '--site', site, '--port', String(takenPort), '--host', '127.0.0.1'],
      'already in use; choose another with --port',
    ],
    [
      'build with --min-free beyond the disk',
      () => ['build', '--data', data, '--site', join(root, 'cli-no-room'), '--min-free', '1000TB'],
      'build on another filesystem (--site), precompute fewer orderings or page sizes, or lower --min-free',
    ],
    [
      'build --for cloudflare --compression best',
      () => ['build', '--data', data, '--site', join(root, 'cli-for'), '--for', 'cloudflare', '--compression', 'best'],
      '--for cloudflare builds no .gz/.br (cloudflare compresses by itself), and --compression best asks for them: drop --compression',
    ],
    [
      'build --site under a regular file',
      () => ['build', '--data', data, '--site', join(data, 'site')],
      'is a file, not a directory; move it away, or choose another with --site',
    ],
    ['build --max-files x', () => ['build', '--data', data, '--max-files', 'x'], 'invalid --max-files "x"'],
    [
      'serve --writable without CITIES_API_TOKEN',
      () => ['serve', '--site', site, '--data', data, '--writable', '--port', '0'],
      '--writable needs a token: set CITIES_API_TOKEN',
      '',
    ],
    [
      'serve --writable with a CITIES_API_TOKEN no client could send',
      () => ['serve', '--site', site, '--data', data, '--writable', '--port', '0'],
      'CITIES_API_TOKEN contains " "',
      'two words',
    ],
  ])('%s', async (_, args, message, token) => {
    const run = await withToken(token, () => cli(root, ...args()));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toMatch(/`|\u0000/);
  });
});
