import { existsSync, readdirSync, renameSync } from 'node:fs';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { serve } from '../src/app/serve.js';
import { CitiesApiError } from '../src/core/errors.js';
import { lockSite } from '../src/fs/lock.js';
import { dropToken, newToken } from '../src/fs/lock-tokens.js';
import { readManifestHead } from '../src/store/manifest-file.js';
import { killStragglers, manyCities, spawnCli, writeDataset } from './crash-helpers.js';
import { readTree, tempDir } from './helpers.js';
import { rawRequest, ROOT, startCli } from './serve-helpers.js';

// A preview (serve --data, no --base-url) never rewrites a site built for deployment, and while
// its first build runs the port answers 503 with Retry-After: never a connection left hanging.

const SAMPLE = join(ROOT, 'data/cities.csv');
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('cities-preview-deploy-')));
afterAll(() => cleanup());

const small = { orderings: ['default'], pageSizes: [20] } as const;
const SMALL_ARGS = ['--orderings', 'default', '--page-sizes', '20'];

/**
 * Another site a preview must keep out of and away from: made in `other` (given back the undo), and
 * what the refusal calls it. A preview's site, or one not built yet that a preview or a build is writing.
 */
const OTHER_SITES: [string, (other: string) => Promise<() => Promise<void>>, string][] = [
  [
    'a site an earlier preview built (the default base URL)',
    async (other) => {
      await build({ data: SAMPLE, out: other, baseUrl: 'http://localhost:8080', ...small });
      return async () => {};
    },
    'the site of a preview (built for http://localhost:8080)',
  ],
  [
    'the site of a preview running now',
    async (other) => {
      const running = await serve({ dir: other, data: SAMPLE, port: 0, ...small });
      return () => running.close();
    },
    'the site of a preview (built for http://127.0.0.1:',
  ],
  [
    'a new site whose preview is running, not built yet (its marker, no manifest)',
    async (other) => {
      const marker = join(dirname(other), `.${basename(other)}.preview`);
      const token = newToken(); // this process's, still held: a preview of this pid running
      await writeFile(marker, `${JSON.stringify({ pid: process.pid, url: 'http://127.0.0.1:9', token })}\n`);
      return async () => {
        dropToken(token);
        await rm(marker, { force: true });
      };
    },
    'the site of a preview running at http://127.0.0.1:9',
  ],
  [
    'a new site a build is writing (its lock held, no manifest yet)',
    async (other) => {
      const release = await lockSite(other);
      return async () => release();
    },
    'a site a build is writing (pid ',
  ],
];

describe("the README's preview next to a deployed site", () => {
  it.each([
    ['the default directory, built with --base-url https://cities.example.org', 'https://cities.example.org'],
    ['a site published under a path', 'https://example.org/api/v1'],
  ])('%s: refused (exit 2, saying what to do), the site byte-identical', async (_, baseUrl) => {
    const site = join(dir, `deployed-${baseUrl.length}`);
    await build({ data: SAMPLE, out: site, baseUrl, ...small });
    const before = await readTree(site);
    const error = await serve({ dir: site, data: SAMPLE, port: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect((error as CitiesApiError).exitCode).toBe(2);
    expect((error as Error).message).toContain(`holds a site built for ${baseUrl}: a preview would rewrite its links`);
    expect(await readTree(site)).toEqual(before);
  });

  it.each([
    ['a new directory inside it', 'preview'],
    ['a new directory deeper inside it', 'new/preview'],
  ])('a preview into %s: refused (exit 2), the deployed site byte-identical', async (_, below) => {
    const site = join(dir, `around-${below.length}`);
    await build({ data: SAMPLE, out: site, baseUrl: 'https://cities.example.org', ...small });
    const before = await readTree(site);
    const names = () => readdirSync(site, { recursive: true }).sort();
    const named = names();
    const error = await serve({ dir: join(site, below), data: SAMPLE, port: 0, ...small }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect(error).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining(
        `, a site built for https://cities.example.org: a preview there would add its pages`,
      ),
    });
    expect(await readTree(site)).toEqual(before);
    // No directory added to it, no marker left in it.
    expect(names()).toEqual(named);
  });

  // Another preview's site, or a site not built yet that a preview or a build is writing: a preview
  // inside it would join that tree, and be swapped from under its server by that site's next build.
  it.each(OTHER_SITES)(
    'a preview into a new directory inside %s: refused (exit 2), nothing written there',
    async (name, make, what) => {
      const outer = join(dir, `outer-${name.replace(/\W+/g, '-').slice(0, 40)}`);
      const undo = await make(outer);
      try {
        const names = () => (existsSync(outer) ? readdirSync(outer, { recursive: true }).sort() : []);
        const named = names();
        const error = await serve({ dir: join(outer, 'inner'), data: SAMPLE, port: 0, ...small }).catch(
          (e: unknown) => e,
        );
        expect(error).toMatchObject({
          exitCode: 2,
          message: expect.stringContaining(`inside ${outer}, ${what}`),
        });
        expect(names()).toEqual(named);
      } finally {
        await undo();
      }
    },
  );

  // The other way round: the preview's directory, an earlier preview's site, holds another site in a
  // directory of its own at any depth. The preview's build carried that site into its new tree and
  // swapped it in (new directories, from under that site's server and builds).
  it.each([
    [
      'a site built for deployment',
      async (other: string) => {
        await build({ data: SAMPLE, out: other, baseUrl: 'https://cities.example.org', ...small });
        return async () => {};
      },
      'a site built for https://cities.example.org',
    ] as const,
    // (A preview running inside the earlier preview's site was refused at its start: the table above.)
    ...OTHER_SITES.filter(([name]) => name !== 'the site of a preview running now'),
  ])('a preview into a directory holding %s: refused (exit 2), nothing written', async (name, make, what) => {
    // A site not made yet (its marker or lock only) is looked for in the preview's directory only (preview-guard.ts siteBelow).
    for (const below of name.includes('no manifest') ? ['inner'] : ['inner', 'a/b/inner']) {
      const outer = join(dir, `holding-${name.replace(/\W+/g, '-').slice(0, 40)}-${below.length}`);
      const other = join(outer, below);
      await build({ data: SAMPLE, out: outer, baseUrl: 'http://localhost:8080', ...small });
      await mkdir(dirname(other), { recursive: true });
      const undo = await make(other);
      try {
        const names = () => readdirSync(outer, { recursive: true }).sort();
        const named = names();
        const error = await serve({ dir: outer, data: SAMPLE, port: 0, ...small }).catch((e: unknown) => e);
        expect(error).toMatchObject({
          exitCode: 2,
          message: expect.stringContaining(`${outer} holds ${other}, ${what}`),
        });
        expect(names()).toEqual(named);
        expect(existsSync(join(dirname(outer), `.${basename(outer)}.preview`))).toBe(false);
      } finally {
        await undo();
      }
    }
  });

  it.each([
    ['built by an earlier preview on another port', 'http://127.0.0.1:9'],
    ['built with the default base URL', 'http://localhost:8080'],
  ])('a site %s is rebuilt with the server’s own links', async (_, baseUrl) => {
    const site = join(dir, `preview-${baseUrl.length}`);
    await build({ data: SAMPLE, out: site, baseUrl, ...small });
    const server = await serve({ dir: site, data: SAMPLE, port: 0 });
    try {
      const body = JSON.parse((await rawRequest(server.apiUrl)).body.toString()) as { next: string };
      expect(body.next.startsWith(server.url)).toBe(true);
    } finally {
      await server.close();
    }
  });

  // This machine's own address: a preview there (serve --host IP) has links a deployment could have too.
  const lan = Object.values(networkInterfaces())
    .flat()
    .find((address) => address?.family === 'IPv4' && !address.internal)?.address;
  it.runIf(lan)(
    'a site an earlier preview built on --host IP is previewed again on that URL: nothing to rewrite',
    async () => {
      const site = join(dir, 'lan-preview');
      const first = await serve({ dir: site, data: SAMPLE, host: lan, port: 0, ...small });
      await first.close();
      const again = await serve({
        dir: site,
        data: SAMPLE,
        host: lan,
        port: Number(new URL(first.url).port),
        ...small,
      });
      try {
        const body = JSON.parse((await rawRequest(again.apiUrl)).body.toString()) as { next: string };
        expect(body.next.startsWith(first.url)).toBe(true);
      } finally {
        await again.close();
      }
    },
  );

  it('a site built for deployment while the preview read its dataset (a build run meanwhile) is not rewritten by its first build: refused, the site as deployed', async () => {
    const site = join(dir, 'deployed-meanwhile');
    const deployed = join(dir, 'deployed-elsewhere');
    await build({ data: SAMPLE, out: deployed, baseUrl: 'https://cities.example.org', ...small });
    const before = await readTree(deployed);
    // Once the dataset is read and the plan made, before anything is written: the deployment lands in the directory.
    const firstBuild = { onStart: () => renameSync(deployed, site) };
    const error = await serve({ dir: site, data: SAMPLE, port: 0, ...small, firstBuild }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect(error).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('holds a site built for https://cities.example.org: a preview would rewrite'),
    });
    expect(await readTree(site)).toEqual(before);
  });

  it('a preview’s --watch rebuild, once a build for deployment replaced its directory, is refused: the site as deployed', async () => {
    const site = join(dir, 'watched-then-deployed');
    const file = join(dir, 'watched.csv');
    await copyFile(SAMPLE, file);
    const logs: string[] = [];
    const server = await serve({ dir: site, data: file, port: 0, watch: true, log: (l) => logs.push(l), ...small });
    try {
      await build({ data: SAMPLE, out: site, baseUrl: 'https://cities.example.org', ...small });
      const next = async () => (JSON.parse((await rawRequest(server.apiUrl)).body.toString()) as { next: string }).next;
      await until(async () => (await next()).startsWith('https://cities.example.org/'));
      const before = await readTree(site);
      await writeDataset(file, manyCities(12, 'edited'));
      await until(() =>
        logs.some((l) =>
          /watched\.csv changed but was not used: .* holds a site built for https:\/\/cities\.example\.org/.test(l),
        ),
      );
      expect(await readTree(site)).toEqual(before);
    } finally {
      await server.close();
    }
  });

  it('with --base-url equal to the site’s, serve --data rebuilds it for that URL', async () => {
    const site = join(dir, 'same-url');
    await build({ data: SAMPLE, out: site, baseUrl: 'https://cities.example.org', ...small });
    const server = await serve({ dir: site, data: SAMPLE, port: 0, baseUrl: 'https://cities.example.org' });
    await server.close();
  });
});

/** Waits (at most 10 s) until `done` holds. */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (const end = Date.now() + 10_000; !(await done()); await new Promise((r) => setTimeout(r, 50)))
    if (Date.now() > end) throw new Error(`still not so after 10 s: ${done}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('two previews of one directory', () => {
  const settings = async (site: string) => (await readManifestHead(site))!.settings.baseUrl;
  type Where = 'killed' | 'here' | 'thread';
  /** A preview of `site` started `where` (a real worker thread of this process runs lib/'s serve()): its URL, and how to stop it. */
  async function preview(where: Where, site: string): Promise<{ url: string; stop: () => Promise<unknown> }> {
    if (where === 'here') {
      const server = await serve({ dir: site, data: SAMPLE, port: 0, ...small });
      return { url: server.url, stop: () => server.close() };
    }
    if (where === 'thread') return inThread(site);
    // Killed, it leaves its marker: a dead preview's is no one's.
    const server = await startCli([site, '--data', SAMPLE, '--port', '0', ...SMALL_ARGS]);
    const killed = new Promise((done) => server.child.once('exit', done));
    return { url: server.url, stop: () => (server.child.kill('SIGKILL'), killed) };
  }
  /** The error a second preview started `where` ends in: its message and exit code. */
  async function refusal(where: Where, site: string): Promise<unknown> {
    const error = await preview(where, site).then(
      async (started) => (await started.stop(), new Error(`not refused: ${started.url}`)),
      (e: unknown) => e,
    );
    if (where === 'here') expect(error).toBeInstanceOf(CitiesApiError);
    return error;
  }

  it.each<[string, Where, Where]>([
    ['in another process, then killed (SIGKILL: its marker left); the second here', 'killed', 'here'],
    ['in this process (the library), then closed; the second in this thread too', 'here', 'here'],
    ['in a worker thread of this process (the same pid), then closed; the second in the main thread', 'thread', 'here'],
    ['in the main thread, then closed; the second in a worker thread of this process', 'here', 'thread'],
  ])(
    'a second preview while the first (%s) runs is refused (exit 2): the first keeps its links; once it stopped, a preview works',
    async (how, first_, second) => {
      const site = join(dir, `two-previews-${how.length}`);
      const first = await preview(first_, site);
      try {
        expect(await refusal(second, site)).toMatchObject({
          exitCode: 2,
          message: expect.stringContaining(`is the site of another preview, running at ${first.url} (pid `),
        });
        expect(await settings(site)).toBe(first.url);
      } finally {
        await first.stop();
      }
      const next = await serve({ dir: site, data: SAMPLE, port: 0, ...small });
      try {
        expect(await settings(site)).toBe(next.url);
      } finally {
        await next.close();
      }
    },
  );
});

// lib/'s serve() in a worker thread: it says its URL (or its error), and closes when told.
const THREAD = `
  const { parentPort, workerData: { lib, options } } = require('node:worker_threads');
  import(lib + '/index.js')
    .then(({ serve }) => serve(options))
    .then(
      (server) => {
        parentPort.once('message', () => server.close().then(() => parentPort.postMessage({ closed: true })));
        parentPort.postMessage({ url: server.url });
      },
      (error) => parentPort.postMessage({ error: { message: error.message, exitCode: error.exitCode } }),
    );`;

/** A preview of `site` served by a worker thread of this process: its URL and how to stop it, or its error thrown. */
async function inThread(site: string): Promise<{ url: string; stop: () => Promise<unknown> }> {
  const lib = pathToFileURL(join(ROOT, 'lib')).href;
  const options = { dir: site, data: SAMPLE, port: 0, ...small };
  const worker = new Worker(THREAD, { eval: true, workerData: { lib, options } });
  const next = () =>
    new Promise<{ url?: string; error?: object }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  const { url, error } = await next();
  if (!url) {
    await worker.terminate();
    throw Object.assign(new Error(), error);
  }
  return {
    url,
    stop: async () => {
      const closed = next();
      worker.postMessage('close');
      await closed;
      return worker.terminate();
    },
  };
}

describe('Ctrl-C while another build of the site holds its lock', () => {
  type Start = (site: string, signal: AbortSignal) => Promise<unknown>;
  it.each<[string, Start]>([
    [
      'serve --data, before its first build',
      (site, signal) => serve({ dir: site, data: SAMPLE, port: 0, lockWait: 20_000, ...small, firstBuild: { signal } }),
    ],
    ['build', (site, signal) => build({ data: SAMPLE, out: site, lockWait: 20_000, signal, ...small })],
  ])('%s: the wait ends at once, saying the site was left as it was', async (what, start) => {
    const site = join(dir, `waiting-${what.length}`);
    // Another build: a holder of the lock in this thread.
    const release = await lockSite(site);
    try {
      const controller = new AbortController();
      const started = performance.now();
      setTimeout(() => controller.abort(), 300);
      const error = await start(site, controller.signal).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CitiesApiError);
      expect((error as Error).message).toBe(`interrupted: the site ${site} was left as it was (nothing was written)`);
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      await release();
    }
  });
});

describe('while the first build runs', () => {
  it('a build longer than the hold (200 ms here): every request is answered 503 with Retry-After, then the site once built', async () => {
    const data = join(dir, 'many.csv');
    await writeDataset(data, manyCities(3000, 'Town'));
    const port = await freePort();
    const starting = serve({
      dir: join(dir, 'many'),
      data,
      port,
      orderings: ['default', 'name_en', '-name_fr'],
      limits: { firstBuildHold: 200 },
    });
    let built = false;
    void starting.then(() => (built = true));
    const early: { status: number; retryAfter: unknown }[] = [];
    for (const path of ['/cities/?page=2', '/']) {
      while (!built) {
        const res = await rawRequest(`http://127.0.0.1:${port}${path}`).catch(() => null); // null: not listening yet
        if (res && !built) {
          early.push({ status: res.status, retryAfter: res.headers['retry-after'] });
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    const server = await starting;
    try {
      expect(early.length).toBeGreaterThan(0);
      for (const answer of early) expect(answer).toEqual({ status: 503, retryAfter: '5' });
      expect((await rawRequest(`${server.apiUrl}?page=2`)).status).toBe(200);
    } finally {
      await server.close();
    }
  }, 120_000);

  it("a build within the hold (the 48 cities of data/): a request sent during it is answered 200 once it is done, as the conformance replay's first requests are", async () => {
    const port = await freePort();
    // A hold longer than any build of 48 cities, however loaded the machine (the default, 2 s, was outlasted at load 12).
    const starting = serve({
      dir: join(dir, 'sample'),
      data: SAMPLE,
      port,
      orderings: ['default', 'name_en'],
      limits: { firstBuildHold: 50_000 },
    });
    let built = false;
    void starting.then(() => (built = true));
    let answer: { sentWhileBuilding: boolean; status: number } | undefined;
    while (!built && !answer) {
      const sentWhileBuilding = !built;
      const res = await rawRequest(`http://127.0.0.1:${port}/cities/?page=2`).catch(() => null); // null: not listening yet
      if (res) answer = { sentWhileBuilding, status: res.status };
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const server = await starting;
    try {
      expect(answer).toEqual({ sentWhileBuilding: true, status: 200 });
    } finally {
      await server.close();
    }
  }, 60_000);

  it("serve --data prints the build's progress (as build does) while it runs, then its URL", async () => {
    const data = join(dir, 'progress.csv');
    // A line shows once pages have been built for a second: 1,000 cities are ~9,500 pages and their .gz/.br
    // (serve always compresses), several seconds even on a quiet machine (9.0 CPU-s; 2,000 took 14.5 for nothing more).
    await writeDataset(data, manyCities(1000, 'Burg'));
    const run = spawnCli(['serve', join(dir, 'progress-site'), '--data', data, '--port', '0'], {
      CITIES_API_PROGRESS_SECONDS: '0.5',
    });
    try {
      await run.printed(/ at http:/);
      run.child.kill('SIGTERM');
      const { stdout, stderr } = await run.exited;
      expect(stdout).toMatch(
        /progress\.csv: 1000 cities valid; building \d+ pages before serving them \(requests meanwhile: 503 with Retry-After\)/,
      );
      expect(stderr).toMatch(
        /building pages: \d+\/\d+ pages \(\d+%\), \d+ pages\/s, (about \S+ left|time left estimating…)/,
      );
    } finally {
      await killStragglers();
    }
  }, 120_000);
});
