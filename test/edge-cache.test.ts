import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kitEdgeProject, startWorker } from './edge-helpers.js';
import { tempDir } from './helpers.js';
import { startCli } from './serve-helpers.js';
import { requireTool } from './tool-check.js';

// Computed answers' ETags and the Workers Cache API, on the real runtimes: the Worker the
// `edge cloudflare` project runs on workerd (wrangler's dev server, whose Cache API is miniflare's:
// a hit carries `CF-Cache-Status: HIT`), and `cities-api serve` on the same site. A query no file
// covers is answered with the same bytes and ETag by both, a conditional request naming it gets a
// 304 from both, and the Worker's second answer to it comes from the cache, byte for byte.

const WRANGLER = join(import.meta.dirname, '..', 'node_modules', 'wrangler', 'package.json');
const available = requireTool('wrangler (workerd)', WRANGLER, 'npm ci (wrangler is a dev dependency)');

/** cities1234: 1,234 cities; its files cover the default and one-field orderings at the default page sizes. */
const CASES = [
  { what: 'an uncovered page size', query: 'page_size=7&page=3', accept: '*/*', computed: true },
  { what: 'a multi-field ordering', query: 'ordering=name_en,-name_ar&page=4', accept: '*/*', computed: true },
  {
    what: 'page_size ≥ count: every city, in a multi-field order',
    query: 'ordering=-name_en,name_ar&page_size=5000',
    accept: '*/*',
    computed: true,
  },
  { what: 'indented JSON', query: 'page_size=3&page=2', accept: 'application/json; indent=2', computed: true },
  { what: 'a covered page (the host’s file ETag)', query: 'ordering=-name_ar&page=2', accept: '*/*', computed: false },
] as const;

/**
 * The generated worker.js (imported once the cache is wrapped: the Worker takes `caches.default` as
 * it loads), its assets binding and the zone cache wrapped (once per isolate) to count what edge
 * blocks cost: whole files sent by the binding, and ranges (206) the cache answers.
 */
const COUNTING_ENTRY = `const sent = { blocks: 0, blockBytes: 0, ranges: 0, rangeBytes: 0 };
const zone = caches.default;
Object.defineProperty(caches, 'default', {
  value: {
    put: (request, response) => zone.put(request, response),
    async match(request) {
      const hit = await zone.match(request);
      if (!hit || hit.status !== 206) return hit;
      const body = await hit.arrayBuffer();
      sent.ranges++;
      sent.rangeBytes += body.byteLength;
      return new Response(body, hit);
    },
  },
});
const { default: handler } = await import('./worker.js');
let assets;
export default {
  async fetch(request, env, context) {
    if (request.headers.has('x-test-block-bytes')) return Response.json(sent);
    assets ??= {
      async fetch(r) {
        const response = await env.ASSETS.fetch(r);
        if (!new URL(r.url).pathname.includes('/_cities-api/edge/rows/')) return response;
        const body = await response.arrayBuffer();
        sent.blocks++;
        sent.blockBytes += body.byteLength;
        return new Response(body, response);
      },
    };
    return handler.fetch(request, { ...env, ASSETS: assets }, context);
  },
};
`;

let root: string;
let cleanup: () => Promise<void>;
let worker: { url: string; stop: () => Promise<void> };
let serve: { url: string; stop: () => Promise<void> };

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-edge-cache-'));
  if (!available) return;
  const { site, project } = await kitEdgeProject(root, 'cities1234', 'http://api.example.com', 'cloudflare');
  const entry = join(project.out, 'counting.test.js');
  await writeFile(entry, COUNTING_ENTRY);
  worker = await startWorker(join(project.out, 'wrangler.jsonc'), entry);
  serve = await startCli([site, '--port', '0', '--quiet', '--no-preview-pages']);
}, 300_000);
afterAll(async () => {
  await worker?.stop();
  await serve?.stop();
  await cleanup();
});

const get = async (base: string, query: string, headers: Record<string, string>) => {
  const response = await fetch(`${base}/cities/?${query}`, { headers });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
};

describe.skipIf(!available)('computed answers: ETag, 304 and the Workers cache', () => {
  it.each(CASES)('$what ($query)', async ({ query, accept, computed }) => {
    const first = await get(worker.url, query, { accept });
    const again = await get(worker.url, query, { accept });
    const served = await get(serve.url, query, { accept });
    expect([first.status, again.status, served.status]).toEqual([200, 200, 200]);
    expect(first.body.equals(served.body)).toBe(true);
    expect(again.body.equals(first.body)).toBe(true);
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    expect(again.headers.get('etag')).toBe(etag);
    if (computed) {
      expect(etag).toMatch(/^W\/"c[0-9a-f]{32}"$/);
      expect(served.headers.get('etag')).toBe(etag);
      expect([first.headers.get('cf-cache-status'), again.headers.get('cf-cache-status')]).toEqual([null, 'HIT']);
      // The entry's own Cache-Control (shared caches only) never reaches the client.
      expect(again.headers.get('cache-control')).toBeNull();
    } else {
      expect(etag).not.toMatch(/^W\/"c/); // the assets' own, as sirv's is serve's own
      expect(served.headers.get('etag')).not.toMatch(/^W\/"c/);
    }
    for (const [base, tag] of [
      [worker.url, etag!],
      [serve.url, served.headers.get('etag')!],
    ] as const) {
      const conditional = await get(base, query, { accept, 'if-none-match': `"other", ${tag}` });
      expect({ base, status: conditional.status, bytes: conditional.body.length }).toEqual({
        base,
        status: 304,
        bytes: 0,
      });
      expect(conditional.headers.get('etag')).toBe(tag);
    }
  });

  it.each([
    ['an invalid page (404)', 'page_size=7&page=999', '*/*'],
    ['the browsable page', 'page_size=7&page=3', 'text/html'],
  ])('%s: no ETag, never cached', async (_, query, accept) => {
    const first = await get(worker.url, query, { accept });
    const again = await get(worker.url, query, { accept });
    const served = await get(serve.url, query, { accept });
    expect([first.headers.get('etag'), again.headers.get('etag'), served.headers.get('etag')]).toEqual([
      null,
      null,
      null,
    ]);
    expect(again.headers.get('cf-cache-status')).toBeNull();
    expect(again.body.equals(served.body)).toBe(true);
  });
});

describe.skipIf(!available)(
  'edge blocks by range through the zone cache (the assets binding sends whole files)',
  () => {
    type Sent = { blocks: number; blockBytes: number; ranges: number; rangeBytes: number };
    const sent = async () =>
      (await (await fetch(worker.url, { headers: { 'x-test-block-bytes': '1' } })).json()) as Sent;

    it.each([
      [
        'a multi-field page',
        'ordering=name_fr,-name_de&page_size=7&page=11',
        'ordering=name_fr,-name_de&page_size=7&page=12',
      ],
      ['a descending page', 'ordering=-name_it&page_size=9&page=20', 'ordering=-name_it&page_size=9&page=21'],
    ])(
      '%s: its block read whole once and put in the cache; the next page of it, by range from the cache',
      async (_, first, next) => {
        const before = await sent();
        for (const query of [first, next]) {
          const [edge, served] = [await get(worker.url, query, {}), await get(serve.url, query, {})];
          expect({ query, status: edge.status, same: edge.body.equals(served.body) }).toEqual({
            query,
            status: 200,
            same: true,
          });
        }
        const after = await sent();
        expect(after.blocks - before.blocks).toBeGreaterThanOrEqual(1);
        // The next page: no block sent whole, its cities' bytes from the cache by range, within 3 x the answer + 512 KB.
        const third = next.replace(/page=(\d+)/, (_, n) => `page=${Number(n) + 1}`);
        const [edge, served] = [await get(worker.url, third, {}), await get(serve.url, third, {})];
        expect(edge.body.equals(served.body)).toBe(true);
        const last = await sent();
        expect({ blocks: last.blocks - after.blocks, ranged: last.ranges > after.ranges }).toEqual({
          blocks: 0,
          ranged: true,
        });
        expect(last.rangeBytes - after.rangeBytes).toBeLessThanOrEqual(3 * edge.body.length + 512_000);
      },
    );
  },
);
