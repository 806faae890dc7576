import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { writeEdgeProject } from '../src/app/edge-project.js';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { NETLIFY_EDGE_DIR } from '../src/platforms/netlify/recipe.js';
import { ROUTES } from '../src/core/route-table.js';
import { NETLIFY_CACHE_CONTROL, NETLIFY_CDN_CACHE_CONTROL } from '../src/hosts/netlify.js';
import { KIT_DATASETS, replayKit, tempDir } from './helpers.js';
import { kitCopies, kitEdgeProject, readByteByByte } from './edge-helpers.js';
import { denoForNetlifyDev, netlifyDev } from './netlify-dev.js';
import { startCli } from './serve-helpers.js';
import { requireTool } from './tool-check.js';

// `cities-api edge netlify` on Netlify's local runtime (@netlify/dev, its edge functions run by
// Deno): the site's files, and the edge function in front of them on the endpoint's path. Every
// kit answer must be serve's (the kit's), and so must the answers `_redirects` rules could not
// give: page numbers in other spellings, percent-encoded names, other methods, OPTIONS.

const NETLIFY_DEV = join(import.meta.dirname, '..', 'node_modules', '@netlify', 'dev', 'package.json');
const available = requireTool('@netlify/dev', NETLIFY_DEV, 'npm ci (@netlify/dev is a dev dependency)');

let root: string;
let cleanup: () => Promise<void>;
/** The project directory Netlify's runtime serves: each case writes its own project there. */
let served: string;
/** One runtime for the file (a start costs seconds of Deno): @netlify/dev reads the edge functions, their config and the site's files from disk at each request, so each case's project is what answers. */
let dev: Awaited<ReturnType<typeof netlifyDev>> | undefined;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-edge-netlify-'));
  if (!available) return;
  const denoBin = await denoForNetlifyDev(join(root, 'bin'));
  served = join(root, 'served');
  await kitEdgeProject(root, 'empty', 'http://api.example.com', 'netlify', 'served', served);
  dev = await netlifyDev(served, { edgeFunctions: true, denoBin });
}, 120_000);
afterAll(async () => {
  await dev?.stop();
  await cleanup();
});

/** Writes a kit dataset's Netlify project where the runtime serves (replacing the last case's). */
const serveKitProject = (name: string, baseUrl: string) =>
  kitEdgeProject(root, name, baseUrl, 'netlify', 'served', served);

const totals = { passed: 0, failed: 0, edge: 0 };

describe.skipIf(!available).each(KIT_DATASETS)('kit dataset $name on Netlify (edge function, files)', (kit) => {
  it("all 80 answers are the kit's, each through the edge function", async () => {
    const { project } = await serveKitProject(kit.name, kit.baseUrl);
    expect(project.deploy).toBe('npx netlify deploy --prod');
    const byEdge = () => dev!.answeredBy.get('edge-function') ?? 0;
    const before = byEdge();
    const replay = await replayKit(dev!.url, kit.name, kit.prefix);
    totals.passed += replay.passed;
    totals.failed += replay.failed;
    totals.edge += byEdge() - before;
    expect(replay.failures).toEqual([]);
    expect([replay.passed, replay.failed]).toEqual([80, 0]);
    expect(byEdge() - before).toBe(80);
  }, 300_000);
});

/** What `_redirects` rules answered otherwise (issue #25): each must now be serve's answer, byte for byte. */
const ROUTED_AS_SERVE: readonly (readonly [string, string, string])[] = [
  ['a page number in Arabic-Indic digits', 'GET', '/cities/?page=%D9%A2'],
  ['a page number with a leading space', 'GET', '/cities/?page=%202'],
  ['a page number with a leading zero', 'GET', '/cities/?page=02'],
  ['a page number with a plus sign', 'GET', '/cities/?page=%2B2'],
  ['a page number with an underscore', 'GET', '/cities/?page=3_3'],
  ['a percent-encoded parameter name', 'GET', '/cities/?page%5Fsize=3'],
  ['a trailing &', 'GET', '/cities/?page_size=20&page=2&'],
  ['an extra parameter', 'GET', '/cities/?foo=bar&page=2'],
  ['a repeated parameter', 'GET', '/cities/?ordering=name_en&ordering=-name_ar'],
  ['a page no file holds', 'GET', '/cities/?page=99'],
  ['page=abc', 'GET', '/cities/?page=abc'],
  ['the endpoint without its slash', 'GET', '/cities?page=2'],
  ['a covered page', 'GET', '/cities/?ordering=-name_ar&page_size=20&page=2'],
  ['an uncovered page size', 'GET', '/cities/?page_size=7&page=3'],
  ['HEAD of a covered page', 'HEAD', '/cities/?page=2'],
  ['OPTIONS of a covered URL', 'OPTIONS', '/cities/?page=2'],
  ['PUT', 'PUT', '/cities/'],
  ['PATCH', 'PATCH', '/cities/?page=2'],
  ['DELETE', 'DELETE', '/cities/'],
  ['POST (read-only)', 'POST', '/cities/'],
  // The endpoint's path in other spellings, which Django reads as it (gunicorn decodes the path).
  ['a covered page, a letter of the path percent-encoded', 'GET', '/%63ities/?ordering=-name_ar&page_size=20&page=2'],
  ['an uncovered page, the path in lower-case hex', 'GET', '/citi%65%73/?page_size=7&page=3'],
  ["the endpoint's slash written %2F", 'GET', '/cities%2F?page=2'],
];
/** Headers compared (Netlify adds its own: date, age, server, cache-control...). */
const COMPARED = ['content-type', 'allow', 'vary', 'location', 'access-control-allow-origin', 'x-frame-options'];

describe.skipIf(!available)('cities48 on Netlify: what _redirects rules could not express', () => {
  let serve: Awaited<ReturnType<typeof startCli>>;
  let site: string;
  beforeAll(async () => {
    ({ site } = await serveKitProject('cities48', 'http://api.example.com'));
    serve = await startCli([site, '--port', '0', '--quiet', '--no-preview-pages']);
  }, 120_000);
  afterAll(async () => {
    await serve?.stop();
  });

  const answer = async (base: string, method: string, target: string) => {
    const response = await fetch(new URL(target, base), {
      method,
      redirect: 'manual',
      headers: method === 'OPTIONS' ? {} : { accept: 'application/json' },
      body: method === 'PUT' || method === 'PATCH' || method === 'POST' ? 'name_en=x' : undefined,
    });
    return {
      status: response.status,
      headers: Object.fromEntries(COMPARED.map((name) => [name, response.headers.get(name)])),
      body: Buffer.from(await response.arrayBuffer()).toString('utf8'),
    };
  };

  it.each(ROUTED_AS_SERVE)('%s (%s %s): as serve answers', async (_name, method, target) => {
    expect(await answer(dev!.url, method, target)).toEqual(await answer(serve.url, method, target));
  });

  it("a covered query is the CDN's file (with _headers' Cache-Control), an uncovered one the function's", async () => {
    const covered = await fetch(new URL('/cities/?ordering=-name_ar&page_size=20&page=2', dev!.url));
    expect(Buffer.from(await covered.arrayBuffer())).toEqual(await readFile(join(site, 'cities/-name_ar/20/2.json')));
    expect([covered.headers.get('cache-control'), covered.headers.get('allow')]).toEqual([
      NETLIFY_CACHE_CONTROL,
      ROUTES.headers.Allow,
    ]);
    const computed = await fetch(new URL('/cities/?page_size=7', dev!.url));
    expect([computed.status, computed.headers.get('cache-control')]).toEqual([200, NETLIFY_CACHE_CONTROL]);
  });

  // Netlify's CDN keeps a function's answer only when told (issue #25 item 1): the deploy's answers are, errors are not.
  it.each([
    ['a computed page', 'GET', '/cities/?page_size=7', false, 200, true],
    ['a computed page, HEAD', 'HEAD', '/cities/?page_size=7&page=2', false, 200, true],
    ['a multi-field ordering', 'GET', '/cities/?ordering=name_en,-name_ar', false, 200, true],
    ['the browsable page', 'GET', '/cities/?page_size=3&format=api', false, 200, true],
    [
      "a covered query (the CDN's file through the function)",
      'GET',
      '/cities/?ordering=-name_ar&page=2',
      false,
      200,
      true,
    ],
    ['an invalid page (404)', 'GET', '/cities/?page_size=7&page=99', false, 404, false],
    ['a page_size that is no number (404)', 'GET', '/cities/?page_size=abc&page=9', false, 404, false],
    ['the endpoint without its slash (301)', 'GET', '/cities?page=2', false, 301, false],
    ['POST (403)', 'POST', '/cities/', false, 403, false],
    ['PUT (405)', 'PUT', '/cities/', false, 405, false],
    ['OPTIONS', 'OPTIONS', '/cities/?page_size=7', false, 200, false],
    ['a conditional GET of a computed page (304)', 'GET', '/cities/?page_size=7', true, 304, false],
  ])('%s (%s %s): Netlify-CDN-Cache-Control', async (_name, method, target, conditional, status, kept) => {
    const url = new URL(target, dev!.url);
    const tag = conditional ? (await fetch(url)).headers.get('etag')! : undefined;
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      headers: tag ? { 'if-none-match': tag } : {},
      body: method === 'POST' || method === 'PUT' ? 'name_en=x' : undefined,
    });
    await response.arrayBuffer();
    expect([response.status, response.headers.get(ROUTES.header.netlifyCdnCacheControl)]).toEqual([
      status,
      kept ? NETLIFY_CDN_CACHE_CONTROL : null,
    ]);
  });

  it("/openapi.json is the site's file (issue #27 item 8: on every platform)", async () => {
    const openapi = await fetch(new URL('/openapi.json', dev!.url));
    expect(openapi.status).toBe(200);
    expect(Buffer.from(await openapi.arrayBuffer())).toEqual(await readFile(join(site, 'openapi.json')));
  });

  it(`publishes nothing under /${ROUTES.file.meta}/ but the edge data`, async () => {
    const meta = join(site, ROUTES.file.meta);
    const files = (await readdir(meta, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => `${join(e.parentPath, e.name).slice(site.length)}`)
      .sort();
    const statuses = await Promise.all(files.map(async (f) => [f, (await fetch(new URL(f, dev!.url))).status]));
    const edge = `/${ROUTES.edge.dir}/`;
    expect(statuses.filter(([f]) => !String(f).startsWith(edge))).toEqual(
      files.filter((f) => !f.startsWith(edge)).map((f) => [f, 404]),
    );
    expect(statuses.filter(([f, s]) => String(f).startsWith(edge) && s !== 200)).toEqual([]);
    expect(files.filter((f) => f.startsWith(edge)).length).toBeGreaterThan(2);
  });
});

describe.skipIf(!available)("a computed page on Netlify's runtime, read one byte a tick", () => {
  // 4,936 cities (kitCopies(4)), the site built with the default ordering only: a page of
  // `ordering=-name_en` is the function's, streamed in 64 KiB parts (their arrays let go as Deno's
  // server passes them, only where it reads the function's answer itself). A client reading one
  // byte a tick holds each part in the runtime while the next is made: answerListing's bytes.
  const QUERY = 'ordering=-name_en&page_size=1000&page=3';
  const BASE = 'http://api.example.com';
  it("answerListing's bytes, in more than four parts, none detached by the function", async () => {
    const cities = await kitCopies(4);
    const data = join(root, 'copies.json');
    await writeFile(data, JSON.stringify(cities));
    const site = join(served, 'site');
    await rm(site, { recursive: true, force: true });
    await build({ data, out: site, baseUrl: BASE, pageSizes: [100], orderings: ['default'], compression: 'none' });
    await writeEdgeProject('netlify', site, served);
    // The entry (the user's file) counting the arrays detached (ArrayBuffer's transfer), said at `?_transfers`.
    const entry = join(served, NETLIFY_EDGE_DIR, 'cities-api.mjs');
    const original = await readFile(entry, 'utf8');
    await writeFile(
      entry,
      original.replace(
        'export default netlifyEdgeFunction(site);',
        [
          'let transfers = 0;',
          'const transfer = ArrayBuffer.prototype.transfer;',
          'ArrayBuffer.prototype.transfer = function (...args) { transfers++; return transfer.apply(this, args); };',
          'const answer = netlifyEdgeFunction(site);',
          "export default (request, context) => new URL(request.url).searchParams.has('_transfers') ? Response.json({ transfers }) : answer(request, context);",
        ].join('\n'),
      ),
    );
    const expected = Buffer.from(
      bodyBytes(answerListing(new CityIndex(CityTable.fromCities(cities), 'locale'), parseQuery(QUERY), BASE).body),
    );
    const byEdge = dev!.answeredBy.get('edge-function') ?? 0;
    const answer = await readByteByByte(`${dev!.url}/cities/?${QUERY}`);
    const { transfers } = (await (await fetch(`${dev!.url}/cities/?_transfers`)).json()) as { transfers: number };
    await writeFile(entry, original);
    expect(expected.length).toBeGreaterThan(4 * 65536);
    expect(answer.equals(expected)).toBe(true);
    expect((dev!.answeredBy.get('edge-function') ?? 0) - byEdge).toBe(2);
    // Netlify's local runtime reads the answer in JavaScript (in a worker, each part moved to its
    // main thread by postMessage): not Deno's server, so none is detached by the function, which
    // would fail that move (a detached array cannot be transferred).
    expect(transfers).toBe(0);
  }, 300_000);
});

describe('the generated Netlify project', () => {
  it('needs the site inside it (Netlify publishes a directory of the project)', async () => {
    await expect(
      kitEdgeProject(root, 'cities11', 'http://api.example.com', 'netlify', 'outside').then(() => 'written'),
    ).rejects.toThrow(/Netlify publishes a directory inside its project/);
  });

  it('writes the edge function on the endpoint, and leaves the site as built', async () => {
    const { project, site } = await kitEdgeProject(
      root,
      'prefixed30',
      'https://cities.example.org/api/v1',
      'netlify',
      'rules',
      join(root, 'rules'),
    );
    expect([...project.files].sort()).toEqual(
      [
        `${NETLIFY_EDGE_DIR}/cities-api-edge.js`,
        `${NETLIFY_EDGE_DIR}/cities-site.js`,
        `${NETLIFY_EDGE_DIR}/cities-api.mjs`,
        'netlify.toml',
      ].sort(),
    );
    expect(await readFile(join(project.out, 'netlify.toml'), 'utf8')).toContain('publish = "./site"');
    expect(await readFile(join(site, '_redirects'), 'utf8')).not.toContain('cities-api-live');
  });
});

afterAll(() => {
  if (available)
    console.log(
      `Netlify (@netlify/dev, edge function on Deno), all kit datasets: ${totals.passed} passed, ${totals.failed} failed, ${totals.edge} through the edge function`,
    );
});
