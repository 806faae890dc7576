import { Agent, createServer, request } from 'node:http';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchDataset } from '../src/app/dataset-watch.js';
import { LiveSite } from '../src/app/live-site.js';
import { build } from '../src/app/build.js';
import { SiteBuilder } from '../src/app/site-builder.js';
import { readManifestHead } from '../src/store/manifest-file.js';
import { listen } from '../src/http/listen.js';
import { lockSite } from '../src/fs/lock.js';
import { KIT, tempDir } from './helpers.js';

// serve() is four parts, each checked here alone: listen, build the site, serve it, follow the dataset.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-serve-parts-')));
afterAll(() => cleanup());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('listen', () => {
  it.each([
    ['IPv4', '127.0.0.1', /^http:\/\/127\.0\.0\.1:\d+$/],
    ['IPv6, in brackets', '::1', /^http:\/\/\[::1\]:\d+$/],
  ])('says its URL: %s', async (_, host, url) => {
    const listening = await listen(
      createServer((__, res) => res.end('ok')),
      0,
      host,
    );
    expect(listening.url).toMatch(url);
    await listening.close(5_000);
  });

  it('a port in use is a clear error', async () => {
    const first = await listen(createServer(), 0, '127.0.0.1');
    const port = Number(new URL(first.url).port);
    await expect(listen(createServer(), port, '127.0.0.1')).rejects.toThrow(
      `port ${port} on 127.0.0.1 is already in use; choose another with \`port\``,
    );
    await first.close(5_000);
  });

  it('close() ends kept-alive connections instead of waiting for them', async () => {
    const listening = await listen(
      createServer((_, res) => res.end('ok')),
      0,
      '127.0.0.1',
    );
    await new Promise<void>((done) =>
      request(listening.url, { agent: new Agent({ keepAlive: true }) }, (res) => {
        res.resume();
        res.on('end', done);
      }).end(),
    );
    const started = performance.now();
    await listening.close(5_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('watchDataset', () => {
  // Each case: the path watched (made in `dir`), and the change that must be reported.
  it.each<[string, (dir: string) => Promise<string>, (watched: string) => Promise<void>]>([
    ['an edit of the file', async (dir) => `${dir}/edited.csv`, (file) => writeFile(file, 'changed')],
    [
      'a file renamed over it (as editors save)',
      async (dir) => `${dir}/renamed.csv`,
      async (file) => {
        await writeFile(`${file}.new`, 'new');
        await rename(`${file}.new`, file);
      },
    ],
    [
      "an edit of a symlinked dataset's target",
      async (dir) => {
        await writeFile(`${dir}/target.csv`, 'x');
        await symlink(`${dir}/target.csv`, `${dir}/link.csv`);
        return `${dir}/link.csv`;
      },
      (link) => writeFile(link.replace('link.csv', 'target.csv'), 'y'),
    ],
  ])('reports %s once, when it settles', async (name, make, change) => {
    const dir = join(root, `watch-${name.replace(/\W+/g, '-')}`);
    await mkdir(dir);
    const file = await make(dir);
    if (!existsSync(file)) await writeFile(file, 'x');
    let calls = 0;
    const watching = await watchDataset(file, () => calls++);
    await change(file);
    await pause(600);
    watching.close();
    expect(calls).toBe(1);
  });

  it('after close(), nothing is reported', async () => {
    const file = join(root, 'closed.csv');
    await writeFile(file, 'x');
    let calls = 0;
    (await watchDataset(file, () => calls++)).close();
    await writeFile(file, 'y');
    await pause(400);
    expect(calls).toBe(0);
  });
});

describe('SiteBuilder', () => {
  const options = (dir: string) => ({
    dir,
    serverUrl: 'http://127.0.0.1:1',
    lockWait: 300,
    collation: 'codepoint' as const,
    orderings: ['default'],
    pageSizes: [20],
  });

  it('builds, knows whether the dataset changed since, and a failed rebuild does not stop the next', async () => {
    const data = join(root, 'data.csv');
    const site = join(root, 'site');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const builder = new SiteBuilder(options(site));
    await builder.first(data);
    const live = await LiveSite.open(site);
    builder.serving(live);
    expect([live.current.context.index.count, await builder.changed(data)]).toEqual([11, false]);
    await writeFile(data, 'not,a,dataset\n');
    expect(await builder.changed(data)).toBe(true);
    await expect(builder.publish(data)).rejects.toThrow();
    expect(live.current.context.index.count).toBe(11);
    await copyFile(join(KIT, 'cities48.csv'), data);
    await builder.publish(data);
    expect([live.current.context.index.count, await builder.changed(data)]).toEqual([48, false]);
    await live.close();
  });

  it.each([
    ['page sizes', { pageSizes: [5] }],
    ['orderings', { orderings: ['default', 'name_en'] }],
    ['collation', { collation: 'codepoint' as const }],
    ['compression', { compression: 'none' as const }],
    ['live URL', { liveUrl: 'https://live.example.org' }],
  ])(
    "the first build keeps the %s of the site already in DIR (its base URL is the server's own)",
    async (name, given) => {
      const data = join(root, 'kept.csv');
      const site = join(root, `kept-${name.replace(/\W+/g, '-')}`);
      await copyFile(join(KIT, 'cities11.csv'), data);
      // An earlier preview's site (a site built for a public URL is refused: preview-deploy.test.ts).
      await build({
        data,
        out: site,
        baseUrl: 'http://127.0.0.1:9',
        collation: 'locale',
        pageSizes: [10, 20],
        orderings: ['default'],
        compression: 'fast',
        ...given,
      });
      const before = (await readManifestHead(site))!.settings;
      await new SiteBuilder({ dir: site, serverUrl: 'http://127.0.0.1:1', lockWait: 300 }).first(data);
      expect((await readManifestHead(site))!.settings).toEqual({ ...before, baseUrl: 'http://127.0.0.1:1' });
    },
  );

  it('waits for another build of the same site, then gives up with the lock named', async () => {
    const data = join(root, 'busy.csv');
    const site = join(root, 'busy-site');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const release = await lockSite(site);
    const started = performance.now();
    await expect(new SiteBuilder(options(site)).first(data)).rejects.toThrow(/another build of .*busy-site is running/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    await release();
    await new SiteBuilder(options(site)).first(data);
  });
});
