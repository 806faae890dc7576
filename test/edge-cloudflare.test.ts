import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIT_DATASETS, expectWholeKit, tempDir } from './helpers.js';
import {
  expectPagesAsFiles,
  kitEdgeProject,
  pagesDifferingByDigest,
  startWorker,
  writeDigestEntry,
} from './edge-helpers.js';
import { requireTool } from './tool-check.js';
import { ROUTES } from '../src/core/route-table.js';
import { blockPath, LAYOUTS, rankPath, type EdgeIndex } from '../src/site/edge-files.js';
import { entryModule } from '../src/platforms/recipe.js';

// `cities-api edge cloudflare` on Cloudflare's own runtime: wrangler's dev server (workerd, through
// miniflare) started from the generated wrangler.jsonc, the site as its assets. The whole kit,
// every level, must match (400/400), and every built page must arrive byte for byte as its file.

const WRANGLER = join(import.meta.dirname, '..', 'node_modules', 'wrangler', 'package.json');
const available = requireTool('wrangler (workerd)', WRANGLER, 'npm ci (wrangler is a dev dependency)');

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-edge-cf-')));
afterAll(() => cleanup());

const totals = { passed: 0, failed: 0, pages: 0 };

/**
 * Each kit dataset's project, written once for the file: its cases read it (the kit case changes
 * the site's first page file, which no other case reads).
 */
const projects = new Map<string, ReturnType<typeof kitEdgeProject>>();
function projectOf(name: string, baseUrl: string): ReturnType<typeof kitEdgeProject> {
  let project = projects.get(name);
  if (!project) projects.set(name, (project = kitEdgeProject(root, name, baseUrl, 'cloudflare')));
  return project;
}

describe.skipIf(!available).each(KIT_DATASETS)(
  'kit dataset $name through the generated Worker on workerd',
  ({ name, baseUrl, prefix }) => {
    // One Worker for the dataset's cases: the digest entry beside the untouched worker.js, which answers every other request.
    let made: Awaited<ReturnType<typeof kitEdgeProject>>;
    let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
    beforeAll(async () => {
      made = await projectOf(name, baseUrl);
      worker = await startWorker(join(made.project.out, 'wrangler.jsonc'), await writeDigestEntry(made.project.out));
    }, 300_000);
    afterAll(() => worker?.stop());

    it('every kit answer matches, every page equals its file, covered pages come from the assets', async () => {
      const { site } = made;
      const { url } = worker!;
      // The kit and /openapi.json over HTTP; every page through the Worker in workerd, compared by digest.
      await expectWholeKit(url, name, prefix, totals);
      // Issue #27 item 8: /openapi.json on every platform; here the asset, as the static hosts answer it.
      const openapi = await fetch(new URL('/openapi.json', url));
      expect(openapi.status).toBe(200);
      expect(Buffer.from(await openapi.arrayBuffer())).toEqual(await readFile(join(site, 'openapi.json')));
      const pages = await expectPagesAsFiles(url, site, baseUrl, totals, pagesDifferingByDigest);
      // A covered query is read from the assets binding, not computed: a page file changed after
      // the deploy's files were read is what the Worker sends (assets are read when asked, in dev).
      const { file, target } = pages.find((p) => p.target.endsWith('/cities/'))!;
      await writeFile(join(site, file), '{"changed":true}');
      expect(await (await fetch(new URL(target, url))).text()).toBe('{"changed":true}');
    }, 600_000);

    it("through wrangler: the edge files are assets (the index, every rank file, each layout's first block), the site's other files are not published", async () => {
      const index = JSON.parse(await readFile(join(made.site, ROUTES.edge.index), 'utf8')) as EdgeIndex;
      // A layout of the same order as another is that one's blocks; the empty dataset's layouts have none.
      const blocks = LAYOUTS.filter((l) => Array.isArray(index.layouts[l]) && index.layouts[l].length > 0);
      const published = [ROUTES.edge.index, ...LAYOUTS.map(rankPath), ...blocks.map((l) => blockPath(l, 0))];
      const kept = [ROUTES.extras.manifest, ROUTES.extras.dataset, ROUTES.extras.netlifyRedirects];
      const statuses: Record<string, number> = {};
      for (const path of [...published, ...kept]) {
        const response = await fetch(new URL(`/${path}`, worker!.url));
        await response.arrayBuffer();
        statuses[path] = response.status;
      }
      expect(statuses).toEqual(Object.fromEntries([...published.map((p) => [p, 200]), ...kept.map((p) => [p, 404])]));
    });
  },
);

describe.skipIf(!available)('the generated Cloudflare project', () => {
  it("wrangler.jsonc: the site as assets, the Worker first for the endpoint; .assetsignore keeps the site's own files off the CDN", async () => {
    const { site, project } = await projectOf('prefixed30', 'https://cities.example.org/api/v1');
    const config = JSON.parse(
      (await readFile(join(project.out, 'wrangler.jsonc'), 'utf8')).replace(/^\/\/.*\n/, ''),
    ) as { assets: unknown; main: string };
    expect(config.assets).toEqual({
      directory: '../site',
      binding: 'ASSETS',
      run_worker_first: ['/api/v1/cities', '/api/v1/cities/*'],
    });
    expect((await readFile(join(site, '.assetsignore'), 'utf8')).split('\n')).toEqual(
      expect.arrayContaining(['_cities-api/*', '!_cities-api/edge/', '_redirects', '_headers', '*.gz', '*.br']),
    );
    expect(project.deploy).toBe('npx wrangler deploy');
    expect(await readFile(join(project.out, 'cities-site.js'), 'utf8')).not.toContain('"id"'); // settings only: no city
  });

  // run_worker_first matches the path as sent; Cloudflare's asset worker decodes it (workers-shared
  // decodePath): a spelling no rule matches reaches the Worker where no asset has that path (none is
  // under a mounted endpoint, nor is /cities/ itself one), and an asset asked in another spelling gets
  // a 307 to encodeURIComponent's spelling, which the rules match. So every spelling Django reads as
  // the endpoint gets the Worker's answer, never a file's.
  it.each([
    [
      'cities48',
      'http://api.example.com',
      '/cities/?page_size=7',
      ['/%63ities/?page_size=7', '/citi%65%73/?page=2&page_size=7'],
    ],
    ['cities48', 'http://api.example.com', '/cities/?page=2', ['/%63ities/?page=2', '/cities%2F?page=2']],
    [
      'prefixed30',
      'https://cities.example.org/api/v1',
      '/api/v1/cities/?page_size=7',
      ['/%61pi/v1/cities/?page_size=7', '/api%2Fv1/cities/?page_size=7', '/api/v%31/cities/?page_size=7'],
    ],
  ])(
    "%s (%s): the endpoint in other spellings gets the Worker's answer, as its own spelling does",
    async (name, baseUrl, canonical, others) => {
      const { project } = await projectOf(name, baseUrl);
      const worker = await startWorker(join(project.out, 'wrangler.jsonc'));
      try {
        const ask = async (target: string) => {
          const response = await fetch(`${worker.url}${target}`, { redirect: 'manual' });
          return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
        };
        const own = await ask(canonical);
        expect(own.status).toBe(200);
        for (const target of others) {
          const answer = await ask(target);
          // (?page=2&page_size=7 is page_size=7's second page: the same Worker, its own answer.)
          if (target.includes('page=2&'))
            expect([target, answer.status, answer.etag?.startsWith('W/"c')]).toEqual([target, 200, true]);
          else expect([target, answer]).toEqual([target, own]);
        }
        // A page file asked in another spelling: Cloudflare's 307 to its own spelling. Under the
        // endpoint (no base path), the Worker answers that (404, as serve does); else it is the asset.
        const file = await fetch(`${worker.url}/%63ities/default/default/2.json`, { redirect: 'manual' });
        expect([file.status, file.headers.get('location')]).toEqual([307, '/cities/default/default/2.json']);
        const followed = await fetch(`${worker.url}/cities/default/default/2.json`, { redirect: 'manual' });
        expect(followed.status).toBe(new URL(baseUrl).pathname === '/' ? 404 : 200);
      } finally {
        await worker.stop();
      }
    },
    300_000,
  );

  it("worker.js with maxPageCities (Workers Free): a larger computed page is workerd's clear 500, a smaller one the page", async () => {
    const { project } = await projectOf('cities48', 'http://api.example.com');
    const worker = await readFile(join(project.out, 'worker.js'), 'utf8');
    expect(worker).toContain('cloudflareWorker(site, { maxPageCities: 1000 })');
    const entry = join(project.out, 'capped.test.js');
    await writeFile(
      entry,
      entryModule('cloudflareWorker', 'export default cloudflareWorker(site, { maxPageCities: 10 });\n'),
    );
    const capped = await startWorker(join(project.out, 'wrangler.jsonc'), entry);
    try {
      const ask = async (query: string) => {
        const response = await fetch(new URL(`/cities/?${query}`, capped.url));
        return [response.status, (await response.json()) as { detail?: string; results?: unknown[] }] as const;
      };
      // Multi-field: never a file (a site built for any host holds its pages of every city as files).
      const [status, body] = await ask('ordering=name_en,-id&page_size=1000');
      expect([status, body.detail]).toEqual([
        500,
        expect.stringMatching(
          /^a page of 48 cities is more than the 10 cities this Worker computes on a page \(maxPageCities in worker\.js/,
        ),
      ]);
      const [smaller, page] = await ask('ordering=name_en,-id&page_size=9&page=2');
      expect([smaller, page.results?.length]).toEqual([200, 9]);
    } finally {
      await capped.stop();
    }
  }, 300_000);
});

afterAll(() => {
  if (available)
    console.log(
      `conformance through the Cloudflare Worker (workerd): ${totals.passed} of ${totals.passed + totals.failed} answers match; ${totals.pages} page files byte-identical`,
    );
});
