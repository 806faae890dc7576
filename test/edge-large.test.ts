import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { writeEdgeProject, type EdgeProject, type Platform } from '../src/app/edge-project.js';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { City } from '../src/core/fields.js';
import { bodyBytes } from '../src/core/page.js';
import { route } from '../src/http/route.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { siteSpec } from '../src/site/spec.js';
import { readManifestHead } from '../src/store/manifest-file.js';
import { DENO, denoServe, startWorker } from './edge-helpers.js';
import { KIT, DISK_TMPDIR, tempDir } from './helpers.js';
import { requireTool } from './tool-check.js';

// A site of several thousand cities (the kit's 1,234 real multilingual cities, four times over,
// with equal English names and distinct Arabic ones, so multi-field orderings break ties) in
// locale collation, through the project `cities-api edge` generates: the function reads only the
// site's edge files, never the dataset, and its answers to deep pages and multi-field orderings
// are serve's bytes (route() over the whole dataset, ICU-collated in Node). The project's code does
// not grow with the site.

const WRANGLER = join(import.meta.dirname, '..', 'node_modules', 'wrangler', 'package.json');
const COPIES = 4;
/** Few precomputed files: nearly every query below is the function's to compute. */
const SETTINGS = {
  baseUrl: 'https://api.example.org',
  pageSizes: [10],
  orderings: ['default', 'name_en'],
  compress: false,
};

const QUERIES = [
  'ordering=-name_ar&page_size=7&page=700',
  'ordering=-name_ar&page_size=7&page=706',
  'ordering=name_en,-name_ar',
  'ordering=name_en,-name_ar&page=300',
  'ordering=name_en,-name_ar&page_size=33&page=149',
  'ordering=-name_fr,name_ar,-id&page_size=50&page=80',
  'ordering=id&page_size=13&page=200',
  'ordering=name_ch&page_size=1000&page=4',
  'ordering=-name_ru&page_size=10&page=493',
  'ordering=name_uk&page=99999',
  'page_size=3&page=last',
  'ordering=-name_en,name_de&page=250&format=json',
  'ordering=name_en,-name_ar&page=120&format=api',
];

let root: string;
let cleanup: () => Promise<void>;
let site: string;
let serve: (query: string) => Promise<{ status: number; body: string }>;
const smallBundle = new Map<Platform, EdgeProject>();

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-edge-large-', DISK_TMPDIR));
  const kit = await readDataset(join(KIT, 'cities1234.json'));
  const base: City[] = kit.toCities();
  const cities = Array.from({ length: COPIES }, (_, copy) =>
    base.map((c) => ({ ...c, id: c.id + copy * 100_000, name_ar: copy ? `${c.name_ar} ${copy}` : c.name_ar })),
  ).flat();
  const data = join(root, 'cities.json');
  await writeFile(data, JSON.stringify(cities));
  site = join(root, 'site');
  await build({ data, out: site, ...SETTINGS });
  const table = CityTable.fromCities(cities);
  const manifest = (await readManifestHead(site))!;
  const whole = {
    spec: siteSpec(manifest.settings, table.count),
    index: new CityIndex(table, manifest.settings.collation),
    useFiles: false,
  };
  serve = async (query) => {
    const answer = route({ method: 'GET', target: `/cities/?${query}`, accept: '*/*' }, whole);
    if (answer.kind !== 'answer') throw new Error(`serve does not compute ${query}`);
    return {
      status: answer.status,
      body: Buffer.from(bodyBytes(answer.body instanceof Uint8Array ? [answer.body] : answer.body)).toString(),
    };
  };
  // The same project for the kit's 11 cities, with the same settings: its code is the yardstick.
  for (const platform of ['cloudflare', 'deno'] as const) {
    await build({ data: join(KIT, 'cities11.csv'), out: join(root, `small-${platform}`), ...SETTINGS });
    smallBundle.set(
      platform,
      await writeEdgeProject(platform, join(root, `small-${platform}`), join(root, `small-${platform}-project`)),
    );
  }
}, 180_000);
afterAll(() => cleanup());

const RUNTIMES = [
  {
    platform: 'cloudflare',
    runtime: 'workerd (wrangler dev)',
    available: requireTool('wrangler (workerd)', WRANGLER, 'npm ci (wrangler is a dev dependency)'),
    start: (p: EdgeProject) => startWorker(join(p.out, 'wrangler.jsonc')),
  },
  {
    platform: 'deno',
    runtime: 'deno serve',
    available: requireTool('deno', DENO, 'npm ci (deno is a dev dependency)'),
    start: (p: EdgeProject) => denoServe(p.out, p.deploy),
  },
] as const;

describe.each(RUNTIMES)(
  `${COPIES * 1234} cities through the generated $platform project on $runtime`,
  ({ platform, available, start }) => {
    it.skipIf(!available)(
      "deep pages and multi-field orderings are serve's bytes; the project's code is the 11-city site's",
      async () => {
        const project = await writeEdgeProject(platform, site, join(root, platform));
        const small = smallBundle.get(platform)!;
        expect(project.bundleBytes).toBe(small.bundleBytes);
        const code = async (p: EdgeProject) =>
          Promise.all(
            p.files
              .filter((f) => !f.startsWith('/') && f.endsWith('.js'))
              .map(async (f) => (await stat(join(p.out, f))).size),
          );
        const [large, tiny] = [await code(project), await code(small)];
        expect(large.length).toBe(tiny.length);
        // Only the settings' few bytes (the site's path) may differ.
        large.forEach((size, i) => expect(Math.abs(size - tiny[i]!)).toBeLessThan(200));
        expect((await readFile(join(project.out, 'cities-site.js'))).length).toBeLessThan(2_000);
        const server = await start(project);
        try {
          const differing: string[] = [];
          const statuses: number[] = [];
          for (const query of QUERIES) {
            const response = await fetch(`${server.url}/cities/?${query}`, { headers: { accept: '*/*' } });
            const got = { status: response.status, body: await response.text() };
            const want = await serve(query);
            statuses.push(got.status);
            if (got.status !== want.status || got.body !== want.body)
              differing.push(`?${query}: ${got.status} ${got.body.slice(0, 160)}`);
          }
          expect(differing).toEqual([]);
          // Pages, not errors, but the one page past the end.
          expect(statuses.filter((s) => s !== 200)).toEqual([404]);
          // Every city, read by a slow client (a pause after each chunk, so the runtime waits on it):
          // on workerd the page's parts go through its pipe, each array written again once taken
          // (twice over: a copy is kept in the cache in step); the bytes are still serve's.
          for (const query of [`ordering=-name_ar,name_en&page_size=${COPIES * 1234}`, `page_size=${COPIES * 1234}`]) {
            const reader = (await fetch(`${server.url}/cities/?${query}`)).body!.getReader();
            const chunks: Uint8Array[] = [];
            for (let next = await reader.read(); !next.done; next = await reader.read()) {
              chunks.push(next.value);
              await new Promise((resolve) => setTimeout(resolve, 2));
            }
            expect(Buffer.concat(chunks).toString() === (await serve(query)).body).toBe(true);
          }
        } finally {
          await server.stop();
        }
      },
      120_000,
    );
  },
);
