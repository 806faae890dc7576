import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHere } from '../src/app/build.js';
import { serve } from '../src/app/serve.js';
import { runningThreads } from '../src/proc/workers.js';
import { MANIFEST_PATH } from '../src/site/manifest.js';
import { siteSiblings } from '../src/fs/lock.js';
import { makeCity, tempDir } from './helpers.js';
import { startCli } from './serve-helpers.js';

// A --watch rebuild still running when the server stops (#26 leftovers): close() (the library's),
// SIGTERM and Ctrl-C (the CLI's) stop it as Ctrl-C stops a build: its staging tree removed, the
// lock released, the site left as it was; close() resolves once none of its threads runs.

/** Cities enough for the rebuild to run in a thread (1 MB and more, build.ts) and for long enough to be caught. */
const CITIES = 4000;
const SITE = ['--port', '0', '--base-url', 'http://x.test', '--collation', 'codepoint', '--page-sizes', '10'];

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
}, 60_000);
afterAll(() => cleanup());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dataset = (count: number, name = 'City') =>
  JSON.stringify(Array.from({ length: count }, (_, i) => makeCity(i + 1, { name: `${name} ${i + 1}` })));

/** A site built from a dataset of its own, in a directory of its own (`label`), served as its dataset is edited. */
async function builtSite(label: string): Promise<{ site: string; data: string; manifest: Buffer }> {
  const site = join(dir, label, 'site');
  const data = join(dir, label, 'cities.json');
  await mkdir(join(dir, label));
  await writeFile(data, dataset(CITIES));
  await buildHere({ data, out: site, baseUrl: 'http://x.test', pageSizes: [10], collation: 'codepoint' });
  return { site, data, manifest: await readFile(join(site, MANIFEST_PATH)) };
}

/** Waits (at most 30 s) until the rebuild writes its staging tree beside the site (the CLI's is named by its own pid). */
async function rebuilding(site: string): Promise<void> {
  const staging = `${basename(siteSiblings(site).staging).replace(/\d+$/, '')}`;
  for (let waited = 0; waited < 30_000; waited += 10) {
    if ((await readdir(join(site, '..'))).some((name) => name.startsWith(staging))) return;
    await sleep(10);
  }
  throw new Error(`no rebuild seen (${staging}*)`);
}

/** What is beside the site (its lock, a staging tree, an old tree, its stat cache...) and the dataset. */
const beside = async (site: string) => (await readdir(join(site, '..'))).sort();

describe('a --watch rebuild running as the server stops is stopped: the site as it was, nothing left of it', () => {
  it.each<[string, (site: string, data: string) => Promise<void>]>([
    [
      "serve()'s close() (the library's): it resolves once none of the rebuild's threads runs",
      async (site, data) => {
        const before = runningThreads();
        const server = await serve({ dir: site, data, watch: true, port: 0, baseUrl: 'http://x.test' });
        await writeFile(data, dataset(CITIES, 'Town'));
        await rebuilding(site);
        await server.close();
        expect(runningThreads()).toBeLessThanOrEqual(before);
      },
    ],
    ...(['SIGTERM', 'SIGINT'] as const).map((signal): [string, (site: string, data: string) => Promise<void>] => [
      `the CLI sent ${signal}: it says it stopped the rebuild and exits 0 as a stop does`,
      async (site, data) => {
        const server = await startCli(['--site', site, '--data', data, '--watch', ...SITE]);
        const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
        try {
          await writeFile(data, dataset(CITIES, 'Town'));
          await rebuilding(site);
          server.child.kill(signal);
          expect(await exited).toBe(0);
          expect(server.output()).toMatch(/stopped the rebuild[^\n]*\n(.*\n)*stopped\n$/);
        } finally {
          server.child.kill('SIGKILL'); // (a failed case leaves no server running; gone already, a no-op)
        }
      },
    ]),
  ])(
    '%s',
    async (label, stop) => {
      const { site, data, manifest } = await builtSite(label.replace(/\W+/g, '-').slice(0, 40));
      const built = await beside(site);
      await stop(site, data);
      expect(await beside(site)).toEqual(built);
      // Nothing of it goes on later either: the site stays the one built before.
      await sleep(500);
      expect(await beside(site)).toEqual(built);
      expect(await readFile(join(site, MANIFEST_PATH))).toEqual(manifest);
    },
    120_000,
  );
});
