import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEdgeProject, type EdgeProject } from '../src/app/edge-project.js';
import { ROUTES } from '../src/core/route-table.js';
import { DOT_SEGMENT_TARGETS, KIT_DATASETS, expectWholeKit, DISK_TMPDIR, tempDir } from './helpers.js';
import { asSent } from './serve-helpers.js';
import {
  buildKitSite,
  DENO,
  DIGEST_ENTRY,
  denoServe,
  expectPagesAsFiles,
  kitSite,
  pagesDifferingByDigest,
  writeDigestEntry,
} from './edge-helpers.js';
import { requireTool } from './tool-check.js';

// `cities-api edge deno` under a real `deno serve` (the npm `deno` package's binary): the whole kit,
// every level (400/400), and every built page byte for byte, all computed from the site's edge files.

const available = requireTool('deno', DENO, 'npm ci (deno is a dev dependency)');

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-edge-deno-', DISK_TMPDIR)));
afterAll(() => cleanup());

const totals = { passed: 0, failed: 0, pages: 0 };

/**
 * Each kit dataset's Deno project on the disk (its --allow-read reads nothing under /dev/shm), made
 * once for the file: beside it the files of the run's shared kit site (kitSite) that the project
 * reads or is written from, copied by coreutils' cp: the edge data, openapi.json and the manifest.
 * Deno computes every page from the edge data and never reads a page file: one it asked for would
 * be missing there, and its answer would differ from the shared site's file it is compared with.
 * cities1234's whole site (11,758 files) took 1.5 to 6.6 CPU-s to copy to ext4 by the load, and
 * 0.5 to delete. Read in place by its kit case, then taken by the rebuild case that builds a new
 * site over it (the build writes every file of the new site).
 */
interface DenoProject {
  /** The shared kit site, whose pages the answers are compared with. */
  readonly shared: string;
  /** The project's site on the disk. */
  readonly site: string;
  readonly project: EdgeProject;
}
const projects = new Map<string, Promise<DenoProject>>();
function denoProject(name: string, baseUrl: string, take = false): Promise<DenoProject> {
  const key = `${name} ${baseUrl}`;
  const project = projects.get(key) ?? copiedProject(name, baseUrl);
  if (take) projects.delete(key);
  else projects.set(key, project);
  return project;
}
async function copiedProject(name: string, baseUrl: string, under = name): Promise<DenoProject> {
  const shared = await kitSite(name, baseUrl);
  const site = join(root, under, 'site');
  await mkdir(join(site, ROUTES.file.meta), { recursive: true });
  const copies = [
    [ROUTES.edge.dir, ROUTES.file.meta],
    [ROUTES.extras.manifest, ROUTES.file.meta],
    [ROUTES.extras.openapi, ''],
  ];
  await Promise.all(
    copies.map(([from, into]) => promisify(execFile)('cp', ['-R', join(shared, from!), join(site, into!)])),
  );
  return { shared, site, project: await writeEdgeProject('deno', site, join(root, under, 'deno')) };
}

describe.skipIf(!available).each(KIT_DATASETS)('kit dataset $name through deno serve', ({ name, baseUrl, prefix }) => {
  it("every kit answer matches, every page equals its file, and /openapi.json is the site's", async () => {
    const { shared, project } = await denoProject(name, baseUrl);
    expect(project.deploy).toBe('deno serve --v8-flags=--max-semi-space-size=2 --allow-read=../site/ main.js');
    // The kit and /openapi.json over HTTP to main.js; every page through it in Deno, compared by digest.
    await writeDigestEntry(project.out, 'main.js');
    const server = await denoServe(project.out, project.deploy.replace(/main\.js$/, DIGEST_ENTRY));
    try {
      await expectWholeKit(server.url, name, prefix, totals);
      await expectPagesAsFiles(server.url, shared, baseUrl, totals, pagesDifferingByDigest);
      const openapi = await fetch(`${server.url}/openapi.json`);
      expect(openapi.status).toBe(200);
      const file = await readFile(join(shared, ROUTES.extras.openapi));
      expect(Buffer.from(await openapi.arrayBuffer()).equals(file)).toBe(true);
    } finally {
      await server.stop();
    }
  }, 600_000);
});

// deno serve's request.url keeps the client's text; a URL parser would resolve it to the endpoint.
describe.skipIf(!available)('dot segments and double slashes through deno serve: 404, as the reference', () => {
  it('each such path 404, the endpoint itself 200', async () => {
    const { project } = await denoProject('cities11', 'http://api.example.com');
    const server = await denoServe(project.out, project.deploy);
    try {
      const statuses = await Promise.all(
        ['/cities/', ...DOT_SEGMENT_TARGETS].map(async (target) => [target, (await asSent(server.url, target)).status]),
      );
      expect(statuses).toEqual([['/cities/', 200], ...DOT_SEGMENT_TARGETS.map((target) => [target, 404])]);
    } finally {
      await server.stop();
    }
  });
});

describe.skipIf(!available)('--project named from the site', () => {
  it.each<[string, string, (site: string) => string]>([
    ['a folder beside the site', '../site/', (site) => join(site, '..', 'deno-beside')],
    ['the site directory itself', './', (site) => site],
  ])(
    '--project %s: --allow-read=%s (no doubled slash), and deno serves the site from there',
    async (_, read, outOf) => {
      // A copy of its own: the project's files written into the site would be foreign to a rebuild of a shared one.
      const { site } = await copiedProject('cities11', 'http://api.example.com', `project-named-${read.length}`);
      const project = await writeEdgeProject('deno', site, outOf(site));
      expect(project.deploy).toBe(`deno serve --v8-flags=--max-semi-space-size=2 --allow-read=${read} main.js`);
      const server = await denoServe(project.out, project.deploy);
      try {
        const answer = await fetch(`${server.url}/cities/?page_size=1`);
        expect(((await answer.json()) as { count: number }).count).toBe(11);
      } finally {
        await server.stop();
      }
    },
    120_000,
  );
});

describe.skipIf(!available)('a site rebuilt under a running deno serve', () => {
  it.each([
    ['cities11', 11, 'cities48', 48],
    ['cities1234', 1234, 'cities11', 11],
  ])(
    "built from %s (%i cities), rebuilt from %s (%i): the next answers are the new build's, every page equal to its new file",
    async (first, before, then, after) => {
      const baseUrl = 'http://api.example.com';
      const { site, project } = await denoProject(first, baseUrl, true);
      const server = await denoServe(project.out, project.deploy);
      const count = async () =>
        ((await (await fetch(`${server.url}/cities/?page_size=1`)).json()) as { count: number }).count;
      try {
        expect(await count()).toBe(before);
        await buildKitSite(site, then, baseUrl);
        expect(await count()).toBe(after);
        await expectPagesAsFiles(server.url, site, baseUrl, totals);
      } finally {
        await server.stop();
      }
    },
    600_000,
  );
});

afterAll(() => {
  if (available)
    console.log(
      `conformance through deno serve: ${totals.passed} of ${totals.passed + totals.failed} answers match; ${totals.pages} page files byte-identical`,
    );
});
