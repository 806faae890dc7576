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
import { fill, ROUTES } from '../src/core/route-table.js';

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

describe.skipIf(!available).each(KIT_DATASETS)(
  'kit dataset $name through the generated Worker on workerd',
  ({ name, baseUrl, prefix }) => {
    it('every kit answer matches, every page equals its file, covered pages come from the assets', async () => {
      const { site, project } = await kitEdgeProject(root, name, baseUrl, 'cloudflare');
      // The kit and /openapi.json over HTTP; every page through the Worker in workerd, compared by digest.
      const worker = await startWorker(join(project.out, 'wrangler.jsonc'), await writeDigestEntry(project.out));
      try {
        await expectWholeKit(worker.url, name, prefix, totals);
        // Issue #27 item 8: /openapi.json on every platform; here the asset, as the static hosts answer it.
        const openapi = await fetch(new URL('/openapi.json', worker.url));
        expect(openapi.status).toBe(200);
        expect(Buffer.from(await openapi.arrayBuffer())).toEqual(await readFile(join(site, 'openapi.json')));
        const pages = await expectPagesAsFiles(worker.url, site, baseUrl, totals, pagesDifferingByDigest);
        // A covered query is read from the assets binding, not computed: a page file changed after
        // the deploy's files were read is what the Worker sends (assets are read when asked, in dev).
        const { file, target } = pages.find((p) => p.target.endsWith('/cities/'))!;
        await writeFile(join(site, file), '{"changed":true}');
        expect(await (await fetch(new URL(target, worker.url))).text()).toBe('{"changed":true}');
      } finally {
        await worker.stop();
      }
    }, 600_000);
  },
);

describe.skipIf(!available)('the generated Cloudflare project', () => {
  it("wrangler.jsonc: the site as assets, the Worker first for the endpoint; .assetsignore keeps the site's own files off the CDN", async () => {
    const { site, project } = await kitEdgeProject(
      root,
      'prefixed30',
      'https://cities.example.org/api/v1',
      'cloudflare',
    );
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

  it("through wrangler: the edge files are assets (the Worker reads them), the site's other files are not published", async () => {
    const { project } = await kitEdgeProject(root, 'cities11', 'http://api.example.com', 'cloudflare', 'published');
    const worker = await startWorker(join(project.out, 'wrangler.jsonc'));
    try {
      const status = async (path: string) => (await fetch(new URL(path, worker.url))).status;
      expect({
        index: await status(`/${ROUTES.edge.index}`),
        block: await status(`/${fill(ROUTES.edge.block, { layout: 'name_ar', block: 0 })}`),
        manifest: await status(`/${ROUTES.extras.manifest}`),
        dataset: await status(`/${ROUTES.extras.dataset}`),
        redirects: await status(`/${ROUTES.extras.netlifyRedirects}`),
      }).toEqual({ index: 200, block: 200, manifest: 404, dataset: 404, redirects: 404 });
    } finally {
      await worker.stop();
    }
  }, 120_000);
});

afterAll(() => {
  if (available)
    console.log(
      `conformance through the Cloudflare Worker (workerd): ${totals.passed} of ${totals.passed + totals.failed} answers match; ${totals.pages} page files byte-identical`,
    );
});
