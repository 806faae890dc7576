import { cp } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  build,
  CitiesApiError,
  netlifyRedirects,
  readDataset,
  readManifest,
  SAMPLE_DATASET,
  serve,
  siteSpec,
  type BuildOptions,
  type RunningServer,
  type ServeOptions,
} from '../src/index.js';
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
/** A site built for a deployment's URL, which a preview (serve with a dataset, no base URL) must not rewrite. */
let deployed: string;
/** A site a preview serves all along: a second preview of it on another URL is refused. */
let previewed: string;
let preview: RunningServer;
const SMALL = { orderings: ['default'], pageSizes: [10], compression: 'none' } as const;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-option-names-'));
  data = join(root, 'cities.csv');
  await cp(SAMPLE_DATASET, data);
  site = join(root, 'site');
  await build({ data, out: site, ...SMALL });
  deployed = join(root, 'deployed');
  await build({ data, out: deployed, baseUrl: 'https://api.example.org', ...SMALL });
  previewed = join(root, 'previewed');
  preview = await serve({ dir: previewed, data, port: 0, orderings: ['default'], pageSizes: [10] });
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as { port: number }).port;
});
afterAll(async () => {
  await preview?.close();
  await new Promise((resolve) => taken.close(resolve));
  await cleanup();
});

/** What a message says: a part of it, or each of several parts. */
type Said = string | readonly string[];

/** The CLI's small site: one ordering, one page size. */
const SMALL_FLAGS = ['--orderings', 'default', '--page-sizes', '10'];

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
  it.each<[string, () => ServeOptions, Said]>([
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
    [
      'a directory that holds no site',
      () => ({ dir: join(root, 'empty'), port: 0 }),
      'holds no cities-api site: build it first (cities-api build), or pass `data` to build it now',
    ],
    [
      'a dataset file given as the site',
      () => ({ dir: data, port: 0 }),
      'is a file, not a site directory: to serve a dataset, give it with `data` /',
    ],
    [
      'a preview of a site built for a deployment',
      () => ({ dir: deployed, data, port: 0 }),
      [
        'Serve it as built (without `data`), preview',
        'into another directory (`dir`), or pass `baseUrl` https://api.example.org to rebuild it',
      ],
    ],
    [
      'a second preview of a previewed site',
      () => ({ dir: previewed, data, port: 0, orderings: ['default'], pageSizes: [10] }),
      'Stop that one, or preview into another directory (`dir`)',
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
    for (const part of [message].flat()) expect((error as Error).message).toContain(part);
    expect((error as Error).message).not.toMatch(/--|\u0000/);
  });
});

describe('build(): a message names each option as build() takes it', () => {
  it.each<[string, () => BuildOptions, Said]>([
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
    [
      'a dataset that does not exist',
      () => ({ data: join(root, 'nowhere.csv'), out: join(root, 'no-data') }),
      `or choose another with \`data\`; to try cities-api, a sample of 48 cities ships with it: \`data\` ${SAMPLE_DATASET}`,
    ],
    [
      'a site directory holding the working directory',
      () => ({ data, out: join(root, 'wd'), cwd: join(root, 'wd', 'in') }),
      'choose a directory of its own with `out`, e.g. dist',
    ],
    [
      'more files than maxFiles, and the ways to fit',
      () => ({ data, out: join(root, 'many'), maxFiles: 1000 }),
      [
        'above `maxFiles` 1,000',
        'of the 33 orderings (e.g. `orderings` default,',
        '`pageSizes` 100 (933 files); or `compression` none (one file per page instead of three); or `host` cloudflare, for Cloudflare Workers',
        'raise `maxFiles` to',
      ],
    ],
  ])('%s', async (_, options, message) => {
    const error = await build(options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    for (const part of [message].flat()) expect((error as Error).message).toContain(part);
    expect((error as Error).message).not.toMatch(/--|\u0000/);
  });
});

describe("the other exports: a message names each option as the export's caller gave it", () => {
  it.each<[string, () => Promise<unknown>, string]>([
    [
      'readDataset() of a file that does not exist',
      () => readDataset(join(root, 'nowhere.csv')),
      `or choose another with \`file\`; to try cities-api, a sample of 48 cities ships with it: \`file\` ${SAMPLE_DATASET}`,
    ],
    [
      'netlifyRedirects() of a base URL Netlify cannot hold',
      async () =>
        netlifyRedirects(
          siteSpec({ ...(await readManifest(site))!.settings, baseUrl: 'https://example.org/:v1/' }, 48),
        ),
      'or choose a `baseUrl` whose path segments neither start with ":" nor hold "*"',
    ],
  ])('%s', async (_, call, message) => {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    for (const part of [message].flat()) expect((error as Error).message).toContain(part);
    expect((error as Error).message).not.toMatch(/--|\u0000/);
  });
});

describe('the CLI: the same messages name the flags, from its option table', () => {
  it.each<[string, () => string[], Said, string?]>([
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
    [
      'serve --site of a directory that holds no site',
      () => ['serve', '--site', join(root, 'empty'), '--port', '0'],
      'holds no cities-api site: build it first (cities-api build), or pass --data to build it now',
    ],
    [
      'serve --site of a dataset file',
      () => ['serve', '--site', data, '--port', '0'],
      'is a file, not a site directory: to serve a dataset, give it with --data /',
    ],
    [
      'serve --data over a site built for a deployment',
      () => ['serve', '--site', deployed, '--data', data, '--port', '0'],
      [
        'Serve it as built (without --data), preview',
        'into another directory (--site), or pass --base-url https://api.example.org to rebuild it',
      ],
    ],
    [
      'serve --data of a site another preview serves',
      () => ['serve', '--site', previewed, '--data', data, '--port', '0', ...SMALL_FLAGS],
      'Stop that one, or preview into another directory (--site)',
    ],
    [
      'build --data of a file that does not exist',
      () => ['build', '--data', join(root, 'nowhere.csv'), '--site', join(root, 'cli-no-data')],
      `or choose another with --data; to try cities-api, a sample of 48 cities ships with it: --data ${SAMPLE_DATASET}`,
    ],
    [
      'build --site holding the working directory',
      () => ['build', '--data', data, '--site', '.'],
      'choose a directory of its own with --site, e.g. dist',
    ],
    [
      'build --max-files 1000, and the ways to fit',
      () => ['build', '--data', data, '--site', join(root, 'cli-many'), '--max-files', '1000'],
      [
        'above --max-files 1,000',
        'of the 33 orderings (e.g. --orderings default,',
        '--page-sizes 100 (933 files); or --compression none (one file per page instead of three); or --for cloudflare, for Cloudflare Workers',
        'raise --max-files to',
      ],
    ],
  ])('%s', async (_, args, message, token) => {
    const run = await withToken(token, () => cli(root, ...args()));
    expect(run.code).not.toBe(0);
    for (const part of [message].flat()) expect(run.stderr).toContain(part);
    expect(run.stderr).not.toMatch(/`|\u0000/);
  });
});
