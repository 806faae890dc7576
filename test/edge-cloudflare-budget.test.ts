import { readdirSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { bodyBytes } from '../src/core/page.js';
import { ROUTES } from '../src/core/route-table.js';
import { route } from '../src/http/route.js';
import { CLOUDFLARE_FREE } from '../src/site/asset-budget.js';
import { siteSpec } from '../src/site/spec.js';
import { readManifestHead } from '../src/store/manifest-file.js';
import { cli } from './cli-helpers.js';
import { inotifyWatches, kitCopies, openFiles, wranglerDev, WRANGLER_BIN } from './edge-helpers.js';
import { KIT, tempDir } from './helpers.js';
import { rawRequest, RequestTimeout } from './serve-helpers.js';
import { requireTool } from './tool-check.js';

// docs/cloudflare.md's commands at real size, as a user runs them: `cities-api build --for
// cloudflare`, `cities-api edge cloudflare`, then `npx wrangler dev` in the project (a process,
// its output read). About 21,000 cities (the kit's 1,234 real multilingual cities 17 times, every
// name of each copy its own, so that every field has its layout, but name_it, which takes one of
// TIED values: tie groups of thousands, which a build for Cloudflare writes in fine blocks of
// compact cities, edge-cuts.ts and compact-cities.ts): the site fits the Workers Free plan's
// assets (at most 20,000 files, none over 25 MiB), wrangler starts without flooding warnings, and
// its answers, covered or computed, are serve's bytes.

const available = requireTool('wrangler (workerd)', WRANGLER_BIN, 'npm ci (wrangler is a dev dependency)');
const COPIES = 17;
const TIED = 5;
/** How long one answer of wrangler dev is waited for before it is asked once more (the slowest seen alone: 2.1 s, the pages of every city). */
const REQUEST_MS = 120_000;
const BASE_URL = 'https://api.example.org';

let root: string;
let cleanup: () => Promise<void>;
let count: number;
let serve: (query: string) => { status: number; body: string };
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-cf-budget-'));
  const cities = (await kitCopies(COPIES)).map((c, i) => ({ ...c, name_it: `Gruppo ${i % TIED}` }));
  count = cities.length;
  await writeFile(join(root, 'cities.json'), JSON.stringify(cities));
  const table = CityTable.fromCities(cities);
  const whole = (spec: ReturnType<typeof siteSpec>) => ({
    spec,
    index: new CityIndex(table, spec.collation),
    useFiles: false,
  });
  let context: ReturnType<typeof whole> | undefined;
  serve = (query) => {
    const answer = route({ method: 'GET', target: `/cities/?${query}`, accept: '*/*' }, context!);
    if (answer.kind !== 'answer') throw new Error(`serve does not compute ${query}`);
    const parts = answer.body instanceof Uint8Array ? [answer.body] : answer.body;
    return { status: answer.status, body: Buffer.from(bodyBytes(parts)).toString() };
  };
  const built = await cli(
    root,
    'build',
    '--for',
    'cloudflare',
    '--data',
    'cities.json',
    '--site',
    'dist',
    '--base-url',
    BASE_URL,
  );
  expect({ code: built.code, warned: /warning/i.test(built.stderr) }).toEqual({ code: 0, warned: false });
  context = whole(siteSpec((await readManifestHead(join(root, 'dist')))!.settings, count));
}, 600_000);
afterAll(() => cleanup());

/**
 * Waits (up to a minute, then says so) until wrangler dev's processes hold fewer than 2,000 open
 * files. Its inspector proxy turns on workerd's Network domain, and asset reads leave sockets
 * between workerd and wrangler's local server, closed only seconds later: a page of every city
 * left 3,000 (46 blocks of 240 KB) to 7,000 (~1,500 fine blocks), and with three of the latter
 * asked back to back the third was once not answered within 120 s. That is the dev server's; the
 * Worker's reads, what this test is about, are each page's own: one such page at a time.
 */
async function filesClosed(pid: number): Promise<void> {
  const until = performance.now() + 60_000;
  let files = await openFiles(pid);
  while (files !== null && files >= 2_000 && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    files = await openFiles(pid);
  }
  if (files !== null && files >= 2_000) console.warn(`!! wrangler dev still holds ${files} open files after a minute`);
  else console.log(`wrangler dev: ${files ?? '?'} files open`);
}

/** Every file of a directory, with its size (readdirSync and statSync: 20,000 stats through fs/promises cost seconds). */
function filesOf(dir: string): { path: string; bytes: number }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const path = join(e.parentPath, e.name);
      return { path: path.slice(dir.length + 1), bytes: statSync(path).size };
    });
}

describe.skipIf(!available)(`${COPIES * 1234} cities: build --for cloudflare, edge cloudflare, wrangler dev`, () => {
  it("the site fits the Free plan's assets: at most 20,000 files, none over 25 MiB, no .gz/.br, no other host's files", async () => {
    const files = filesOf(join(root, 'dist'));
    const settings = (await readManifestHead(join(root, 'dist')))!.settings;
    expect({
      host: settings.host,
      firstPagesSet: (settings.firstPages ?? 0) > 0,
      files: files.length <= CLOUDFLARE_FREE.files,
      overSize: files.filter((f) => f.bytes > CLOUDFLARE_FREE.fileBytes).map((f) => f.path),
      compressed: files.filter((f) => /\.(gz|br)$/.test(f.path)).length,
      otherHosts: files.filter((f) =>
        [ROUTES.extras.netlifyRedirects, ROUTES.extras.netlifyHeaders, ROUTES.extras.cloudfront].includes(
          f.path as never,
        ),
      ),
      fineBlocks: (settings.fineBlockBytes ?? 0) > 0,
    }).toEqual({
      host: 'cloudflare',
      firstPagesSet: true,
      files: true,
      overSize: [],
      compressed: 0,
      otherHosts: [],
      fineBlocks: true,
    });
  });

  it("wrangler dev starts on the generated project, prints no warning, and answers serve's bytes, covered or computed", async () => {
    const edge = await cli(root, 'edge', 'cloudflare', '--site', 'dist', '--project', 'edge-cloudflare');
    expect(edge).toMatchObject({ code: 0, stderr: '' });
    const { firstPages } = (await readManifestHead(join(root, 'dist')))!.settings;
    const queries = [
      '',
      'ordering=-name_ar&page=2',
      `ordering=name_en&page=${firstPages}`,
      `ordering=name_en&page=${firstPages! + 1}`,
      'ordering=-name_fr&page_size=20&page=last',
      'ordering=name_uk&page_size=7&page=2000',
      'ordering=name_en,-name_ar&page=3',
      // Thin pages of the tie groups: their cities read from fine blocks, expanded from compact.
      'ordering=name_it,name_en&page_size=100&page=7',
      'ordering=-name_it,name_ar,-top&page=50',
      'ordering=name_it&page_size=100&page=30',
      `page_size=${count}`,
      `ordering=-name_de&page_size=${count + 1}`,
      'page=99999',
      // Pages of every city of orderings whose first field is name_it, read from its ~1,500 fine
      // blocks: each block was read again a city or two later (16,355 asset reads for the first),
      // and wrangler dev's workerd, which keeps each asset read's sockets a few seconds, ran out of
      // files ('Too many open files', never an answer). Each block is now read once.
      `ordering=name_it,-name_de&page_size=${count}`,
      `ordering=-name_it,name_ar,-top&page_size=${count + 1}`,
      `ordering=name_it,name_fr,-name_en&page_size=${count}`,
    ];
    const dev = await wranglerDev(join(root, 'edge-cloudflare'));
    // Stopped when the test ends, a timeout too (a finally would wait for it): a timed-out run left workerd spinning for the rest of CI.
    onTestFinished(() => dev.stop());
    const differing: string[] = [];
    const seconds: string[] = [];
    console.log(`wrangler dev at ${count} cities: ready in ${dev.seconds.toFixed(1)} s`);
    for (const query of queries) {
      // Before a page of every city, wrangler dev's files of the last one closed (below).
      if (/page_size=\d{5}/.test(query)) await filesClosed(dev.pid);
      const asked = performance.now();
      // Each on a connection of its own: at load 9 to 18, a request on a kept-alive one was reset after the
      // pages of every city (ECONNRESET), or never answered (seen with fetch alone against this wrangler dev).
      // One never answered in a CI run too (the test's 600 s went by, nothing said): each is now given
      // REQUEST_MS, asked once more on a new connection if that goes by (said), and fails the second time.
      const ask = () =>
        rawRequest(`${dev.url}/cities/?${query}`, { headers: { accept: '*/*' }, fresh: true, timeoutMs: REQUEST_MS });
      const response = await ask()
        .catch((error) => {
          if (!(error instanceof RequestTimeout)) throw error;
          console.warn(`!! wrangler dev: ?${query}: ${error.message}; asked once more`);
          return ask();
        })
        .catch((error) => {
          throw new Error(`wrangler dev did not answer ?${query} (${error}):\n${dev.output()}`);
        });
      const files = /page_size=\d{5}/.test(query) ? await openFiles(dev.pid) : null;
      seconds.push(
        `?${query} ${((performance.now() - asked) / 1000).toFixed(1)} s${files ? ` (${files} files open)` : ''}`,
      );
      console.log(`wrangler dev: ${seconds.at(-1)}`);
      const got = { status: response.status, body: response.body.toString() };
      const want = serve(query);
      if (got.status !== want.status || got.body !== want.body)
        differing.push(`?${query}: ${got.status} ${got.body.slice(0, 120)}`);
    }
    const watches = await inotifyWatches(dev.pid);
    console.log(
      `wrangler dev at ${count} cities: ready in ${dev.seconds.toFixed(1)} s, ${watches ?? '?'} inotify watches; ${seconds.join(', ')}`,
    );
    expect({ differing, warnings: dev.warnings() }).toEqual({ differing: [], warnings: [] });
    if (watches !== null) expect(watches).toBeLessThan(CLOUDFLARE_FREE.files + 1_000);
  }, 600_000);
});

describe.skipIf(!available)('a site built for any host, through edge cloudflare', () => {
  it("edge cloudflare warns of Netlify's _redirects and _headers (wrangler reads them as Cloudflare's rules), and says to build --for cloudflare", async () => {
    const built = await cli(
      root,
      'build',
      '--data',
      join(KIT, 'cities48.csv'),
      '--site',
      'any',
      '--compression',
      'none',
    );
    expect(built.code).toBe(0);
    const edge = await cli(root, 'edge', 'cloudflare', '--site', 'any', '--project', 'any-cloudflare');
    expect(edge.code).toBe(0);
    expect(edge.stderr).toMatch(
      /_headers and _redirects, which wrangler reads as Cloudflare's rules.*--for cloudflare/,
    );
    expect(await readFile(join(root, 'any', ROUTES.extras.netlifyRedirects), 'utf8')).not.toBe('');
  });
});
