import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer as createSocketServer, type Server as SocketServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { serve, type RunningServer } from '../src/app/serve.js';
import { KIT, makeCity, tempDir } from './helpers.js';
import { rawRequest } from './serve-helpers.js';

// serve answering from a built site whose files are not all as the build left them.
const BASE = 'http://api.example.com';
let root: string;
let cleanup: () => Promise<void>;
const sockets: SocketServer[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-serve-site-'));
  await copyFile(join(KIT, 'cities48.csv'), join(root, 'cities48.csv'));
  // Cities with long names, so that the one-page answer (all.json) is over 1 MiB: sirv streams it.
  const long = (id: number) => `${'Ville-de-la-longue-rue-'.repeat(3)}${id}`;
  await writeFile(
    join(root, 'large.json'),
    JSON.stringify(Array.from({ length: 1200 }, (_, i) => makeCity(i + 1, { name: long(i + 1) }))),
  );
  await (
    await serve({
      dir: join(root, 'site'),
      data: join(root, 'cities48.csv'),
      baseUrl: BASE,
      collation: 'codepoint',
      port: 0,
    })
  ).close();
  await (
    await serve({
      dir: join(root, 'large'),
      data: join(root, 'large.json'),
      baseUrl: BASE,
      collation: 'codepoint',
      port: 0,
      orderings: ['default', 'name_en'],
      pageSizes: [10],
    })
  ).close();
});
afterAll(async () => {
  for (const socket of sockets) socket.close();
  for (const child of children) child.kill('SIGKILL');
  await cleanup();
});

/** Starts serve on an already built site (no dataset: what is in the directory is what is served). */
async function serving<T>(site: string, run: (server: RunningServer) => Promise<T>): Promise<T> {
  const server = await serve({ dir: join(root, site), port: 0 });
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

/** Each site's cities, read once: the cases change its page files, never its dataset (20 reads of up to 1,200 cities before). */
const indexes = new Map<string, Promise<CityIndex>>();
async function expected(site: string, query: string): Promise<Buffer> {
  let index = indexes.get(site);
  if (!index) {
    index = readDataset(join(root, site, '_cities-api', 'cities.json')).then(
      (data) => new CityIndex(data, 'codepoint'),
    );
    indexes.set(site, index);
  }
  return Buffer.from(bodyBytes(answerListing(await index, parseQuery(query), BASE).body));
}

/** A Unix socket where a file should be: it exists, but opening it fails (ENXIO), even for root. */
async function socketAt(path: string): Promise<void> {
  await rm(path, { force: true });
  const socket = createSocketServer();
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.listen(path, resolve));
}

/** Whether an answer came from a site file (sirv's ETag) rather than computed (none, or a computed answer's `W/"c…"`). */
const fromFile = (res: { headers: Record<string, unknown> }) =>
  res.headers.etag !== undefined && !String(res.headers.etag).startsWith('W/"c');

describe('serve answers only files inside the site: a symbolic link is never followed', () => {
  const SECRET = 'root:x:0:0:secret';
  // Each case puts links in place of files (or a directory) of the site, then asks for the page twice.
  it.each([
    [
      'a page linked to a file outside',
      'ordering=name_fr&page=2',
      undefined,
      ['cities/name_fr/default/2.json'],
      'file',
    ],
    [
      'a .br sibling linked outside, asked with br',
      'ordering=name_de&page=2',
      'br',
      ['cities/name_de/default/2.json.br'],
      'file',
    ],
    [
      'a .gz sibling linked outside, asked with gzip',
      'ordering=name_it&page=2',
      'gzip',
      ['cities/name_it/default/2.json.gz'],
      'file',
    ],
    [
      'a page linked to another page of the site',
      'page=3&ordering=name_sp',
      undefined,
      ['cities/name_sp/default/3.json'],
      'page',
    ],
    ['a directory linked to one outside', 'ordering=-name_ar&page=2', undefined, ['cities/-name_ar'], 'directory'],
  ])('%s', async (_, query, encoding, links, how) => {
    const outside = join(root, `outside-${links[0]!.replaceAll('/', '_')}`);
    await mkdir(join(outside, 'default'), { recursive: true });
    await writeFile(join(outside, 'secret'), SECRET);
    for (const link of links) {
      const path = join(root, 'site', link);
      if (how === 'directory') {
        await rename(path, join(outside, 'moved'));
        await writeFile(join(outside, 'default', '2.json'), SECRET);
        await symlink(outside, path);
      } else {
        await rm(path, { force: true });
        await symlink(
          how === 'page' ? join(root, 'site', 'cities/default/default/1.json') : join(outside, 'secret'),
          path,
        );
      }
    }
    await serving('site', async (server) => {
      const headers = encoding ? { 'accept-encoding': encoding } : undefined;
      for (let i = 0; i < 2; i++) {
        const res = await rawRequest(`${server.apiUrl}?${query}`, { headers });
        expect([res.status, fromFile(res), res.headers['content-encoding']]).toEqual([200, false, undefined]);
        expect(res.body.equals(await expected('site', query))).toBe(true);
      }
    });
  });
});

describe('a site file that is missing or unreadable is computed live, never 404 nor a crash', () => {
  // Small files are read into memory on first use (FileCache), large ones streamed by sirv each time:
  // the large file is asked once before it goes, so that the second request takes sirv's path.
  it.each([
    ['missing (cached path)', 'site', 'page=2', 'cities/default/default/2.json', 'missing', undefined],
    [
      'unreadable (cached path)',
      'site',
      'ordering=name_en&page=3',
      'cities/name_en/default/3.json',
      'socket',
      undefined,
    ],
    [
      'missing with its gzip sibling, asked gzipped',
      'site',
      'page=4',
      'cities/default/default/4.json',
      'missing',
      'gzip',
    ],
    [
      'missing (streamed by sirv: over 1 MiB)',
      'large',
      'page_size=2000',
      'cities/default/all-1200.json',
      'missing',
      undefined,
    ],
    [
      'unreadable (streamed by sirv)',
      'large',
      'ordering=name_en&page_size=5000',
      'cities/name_en/all-1200.json',
      'socket',
      undefined,
    ],
  ])('%s', async (_, site, query, file, how, encoding) => {
    await serving(site, async (server) => {
      const url = `${server.apiUrl}?${query}`;
      const headers = encoding ? { 'accept-encoding': encoding } : undefined;
      if (site === 'large') expect(fromFile(await rawRequest(url, { headers }))).toBe(true);
      for (const variant of ['', '.gz', '.br']) await rm(join(root, site, file + variant), { force: true });
      if (how === 'socket') await socketAt(join(root, site, file));
      for (let i = 0; i < 2; i++) {
        const res = await rawRequest(url, { headers });
        expect([res.status, fromFile(res), res.headers['content-encoding']]).toEqual([200, false, undefined]);
        expect(res.body.equals(await expected(site, query))).toBe(true);
      }
      expect((await rawRequest(`${server.apiUrl}?page=1`)).status).toBe(200); // still serving
    });
  });

  it('HEAD of a large precomputed page: its headers, no body', async () => {
    await serving('large', async (server) => {
      const res = await rawRequest(`${server.apiUrl}?page_size=1500`, { method: 'HEAD' });
      const get = await rawRequest(`${server.apiUrl}?page_size=1500`);
      expect([res.status, res.body.length, res.headers['content-length']]).toEqual([200, 0, String(get.body.length)]);
      expect(get.body.length).toBeGreaterThan(1024 * 1024);
    });
  });
});

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

function livePid(): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  return child;
}

async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 50)))
    if (await check()) return true;
  return check();
}

describe('a build lock left by a killed build does not keep serve computing everything live', () => {
  const lock = () => join(root, '.site.lock');
  const page = (server: RunningServer) => rawRequest(`${server.apiUrl}?page=5`); // a page the tests above left in place
  afterAll(() => rm(lock(), { force: true }));

  it('a dead builder’s lock, there at start: files are served', async () => {
    await writeFile(lock(), `${await deadPid()}\n`);
    await serving('site', async (server) => expect(fromFile(await page(server))).toBe(true));
  });

  it('a live builder’s lock at start: computed live until the builder is killed (its lock left behind)', async () => {
    const builder = livePid();
    await writeFile(lock(), `${builder.pid}\n`);
    await serving('site', async (server) => {
      const live = await page(server);
      expect([live.status, fromFile(live)]).toEqual([200, false]);
      builder.kill('SIGKILL');
      expect(await eventually(async () => fromFile(await page(server)))).toBe(true);
    });
  });

  it('a lock appearing while serving: live while its holder lives, files again once it is dead', async () => {
    await rm(lock(), { force: true });
    await serving('site', async (server) => {
      expect(fromFile(await page(server))).toBe(true);
      const builder = livePid();
      await writeFile(lock(), `${builder.pid}\n`);
      expect(await eventually(async () => !fromFile(await page(server)))).toBe(true);
      builder.kill('SIGKILL');
      expect(await eventually(async () => fromFile(await page(server)))).toBe(true);
      await writeFile(lock(), `${await deadPid()}\n`);
      await new Promise((r) => setTimeout(r, 300));
      expect(await eventually(async () => fromFile(await page(server)))).toBe(true);
    });
  });
});

// A build resolves the site's path and takes the lock beside the real directory: a server given a
// symbolic link to the site (or a path through a linked parent) must follow that lock, not one beside the link.
describe("another process's build, followed through the lock beside the site's real directory", () => {
  const lock = () => join(root, '.site.lock');
  beforeAll(async () => {
    await symlink(join(root, 'site'), join(root, 'linked'));
    await symlink(root, join(root, 'parent-link'));
  });
  afterAll(() => rm(lock(), { force: true }));

  it.each([
    ['the site directory itself', 'site'],
    ['a symbolic link to it', 'linked'],
    ['a path through a symbolic link to its parent', 'parent-link/site'],
  ])('served as %s: live while the build holds the lock, files again once it is gone', async (_, served) => {
    await rm(lock(), { force: true });
    await serving(served, async (server) => {
      const page = () => rawRequest(`${server.apiUrl}?page=5`);
      expect(fromFile(await page())).toBe(true);
      const builder = livePid();
      await writeFile(lock(), `${builder.pid}\n`);
      expect(await eventually(async () => !fromFile(await page()))).toBe(true);
      builder.kill('SIGKILL');
      await rm(lock(), { force: true });
      expect(await eventually(async () => fromFile(await page()))).toBe(true);
    });
  });
});

describe('a base URL whose path needs percent-encoding', () => {
  it.each([
    ['non-ASCII', `${BASE}/café`, '/caf%C3%A9/cities/', [`${BASE}/caf%C3%A9/cities/`, '/caf%c3%a9/cities/']],
    ['an encoded slash', `${BASE}/a%2Fb`, '/a/b/cities/', [`${BASE}/a/b/cities/`, '/a%2Fb/cities/']],
  ])(
    '%s: the URL serve prints answers, and links are as the reference writes them',
    async (_, baseUrl, path, [previous, other]) => {
      const server = await serve({
        dir: join(root, `mounted-${path.length}`),
        data: join(root, 'cities48.csv'),
        baseUrl,
        collation: 'codepoint',
        port: 0,
      });
      try {
        expect(server.apiUrl).toBe(`${server.url}${path}`);
        const res = await rawRequest(`${server.apiUrl}?page=2`);
        expect([res.status, fromFile(res), JSON.parse(res.body.toString()).previous]).toEqual([200, true, previous]);
        expect((await rawRequest(`${server.url}${other}?page=2`)).body.equals(res.body)).toBe(true);
        const redirect = await rawRequest(`${server.url}${path.slice(0, -1)}?page=2`);
        expect([redirect.status, redirect.headers.location]).toEqual([301, `${path}?page=2`]);
      } finally {
        await server.close();
      }
    },
  );
});

describe('one request cannot change what the next one gets', () => {
  it('format=%00 with an Accept header, then that Accept header without format', async () => {
    await serving('site', async (server) => {
      const accept = { accept: 'application/json' };
      expect((await rawRequest(`${server.apiUrl}?format=%00`, { headers: accept })).status).toBe(404);
      const res = await rawRequest(`${server.apiUrl}?page=5`, { headers: accept });
      expect([res.status, fromFile(res)]).toEqual([200, true]);
    });
  });
});
