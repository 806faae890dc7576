import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { serve, type RunningServer } from '../src/app/serve.js';
import { CityIndex } from '../src/core/city-index.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { ROUTES } from '../src/core/route-table.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { planAssets } from '../src/platforms/cloudflare/assets.js';
import { CLOUDFLARE_FREE } from '../src/site/asset-budget.js';
import { allPath, staticPathFor } from '../src/site/layout.js';
import { countSiteFiles } from '../src/site/size.js';
import { specOf } from '../src/site/manifest.js';
import type { SiteSpec } from '../src/site/spec.js';
import { readManifestHead } from '../src/store/manifest-file.js';
import { KIT, tempDir, testSpec } from './helpers.js';
import { rawRequest } from './serve-helpers.js';

// A site built for a host (`--for cloudflare`) writes nothing that host's project does not
// publish: no page of every city (at 140,000 cities each is 68 MiB, over the 25 MiB an asset may
// take; the Worker streams that answer from the edge data), and `serve` on it computes that answer
// exactly. Its files are what the budget counts (size.ts), and all of them but the site's own
// (`_cities-api/` but the edge data) are published whatever the file size limit lets through. A
// site built for any host still holds the pages of every city.

const BASE = 'https://api.example.org';
const DATA = join(KIT, 'cities1234.csv');

/** Every file of a site, relative to it, with its size. */
function filesOf(dir: string): Map<string, number> {
  return new Map(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => {
        const path = join(e.parentPath, e.name);
        return [path.slice(dir.length + 1), statSync(path).size];
      }),
  );
}

/** The site's own files, which no host publishes: its manifest and dataset copy (the edge data is published). */
const own = (path: string) => path.startsWith(`${ROUTES.file.meta}/`) && !path.startsWith(`${ROUTES.edge.dir}/`);

let root: string;
let cleanup: () => Promise<void>;
const sites: Record<'host' | 'any', { dir: string; spec: SiteSpec; files: Map<string, number> }> = {} as never;
let index: CityIndex;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-host-site-'));
  for (const [name, host] of [
    ['host', 'cloudflare'],
    ['any', undefined],
  ] as const) {
    const dir = join(root, name);
    await build({
      data: DATA,
      out: dir,
      baseUrl: BASE,
      orderings: ['default', 'name_en', '-name_ar'],
      host,
      compression: 'none',
    });
    sites[name] = { dir, spec: specOf((await readManifestHead(dir))!), files: filesOf(dir) };
  }
  index = new CityIndex(await readDataset(DATA), sites.host.spec.collation);
}, 120_000);
afterAll(() => cleanup());

describe('a site built for a host holds no page of every city', () => {
  const count = 1234;
  it.each([
    ['page_size = count', `page_size=${count}`, 'default'],
    ['page_size above count, an ordering', `ordering=-name_ar&page_size=${count + 1}`, '-name_ar'],
    ['page_size far above count, page=last', `ordering=name_en&page_size=9${count}&page=last`, 'name_en'],
  ])(
    '%s: staticPathFor maps it to no file for a host, to the page of every city for any host',
    (_, query, ordering) => {
      const layout = testSpec({ count, pageSizes: [10, 20], orderings: ['default', 'name_en', '-name_ar'] });
      expect([
        staticPathFor(parseQuery(query), { ...layout, host: 'cloudflare' }),
        staticPathFor(parseQuery(query), layout),
      ]).toEqual([null, allPath(ordering, count)]);
    },
  );

  it.each([
    ['for a host: no page of every city', 'host', 0],
    ['for any host: one per precomputed ordering', 'any', 3],
  ] as const)('%s is written', (_, name, pages) => {
    const every = [...sites[name].files.keys()].filter((path) => /^cities\/[^/]+\/all-\d+\.json$/.test(path));
    expect(every.length).toBe(pages);
  });

  it('for a host: the files written are the files size.ts counts (for any host, it counts the edge data at most)', () => {
    const count = (name: 'host' | 'any') => ({
      written: sites[name].files.size,
      counted: countSiteFiles(sites[name].spec),
    });
    expect(count('host').written).toBe(count('host').counted);
    expect(count('any').written).toBeLessThanOrEqual(count('any').counted);
  });

  it('everything the site for a host writes but its own files is published, even where a file may take no more than its largest page of a list', async () => {
    const { dir, files } = sites.host;
    // A list's pages (cities/{ordering}/{page_size}/{page}.json): the largest of them is what the limit lets through.
    const pages = [...files].filter(([path]) => /^cities\/[^/]+\/[^/]+\/[^/]+\.json$/.test(path));
    const limit = { files: CLOUDFLARE_FREE.files, fileBytes: Math.max(...pages.map(([, size]) => size)) };
    const plan = await planAssets(dir, limit);
    expect({ published: plan.files, ignored: plan.ignore.split('\n').filter((line) => line.startsWith('/')) }).toEqual({
      published: [...files.keys()].filter((path) => !own(path)).length,
      ignored: [],
    });
  });
});

describe('serve on a site built for a host computes the pages of every city', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serve({ dir: sites.host.dir, port: 0 });
  }, 60_000);
  afterAll(() => server?.close());

  it.each([
    `page_size=1234`,
    `ordering=-name_ar&page_size=1235`,
    `ordering=name_en&page_size=100000&page=last`,
    `ordering=name_fr,-top&page_size=5000`,
  ])('?%s: the exact page of every city', async (query) => {
    const response = await rawRequest(`${server.apiUrl}?${query}`, { headers: { accept: 'application/json' } });
    const want = Buffer.from(bodyBytes(answerListing(index, parseQuery(query), BASE).body));
    expect({ status: response.status, same: response.body.equals(want) }).toEqual({ status: 200, same: true });
  });
});
