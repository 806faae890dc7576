import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIT_DATASETS, expectWholeKit, DISK_TMPDIR, tempDir } from './helpers.js';
import {
  buildKitSite,
  DENO,
  DIGEST_ENTRY,
  denoServe,
  expectPagesAsFiles,
  kitEdgeProject,
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
 * Each kit dataset's Deno project, copied to the disk once for the file (the project's own
 * --allow-read reads nothing under /dev/shm; cities1234's 11,758 files cost 1.5 to 6.6 CPU-s to
 * copy on ext4, by the load, and 0.5 to delete): read in place by its kit case, then taken by the
 * rebuild case that changes its site.
 */
const projects = new Map<string, ReturnType<typeof kitEdgeProject>>();
function denoProject(name: string, baseUrl: string, take = false): ReturnType<typeof kitEdgeProject> {
  const key = `${name} ${baseUrl}`;
  const project = projects.get(key) ?? kitEdgeProject(root, name, baseUrl, 'deno');
  if (take) projects.delete(key);
  else projects.set(key, project);
  return project;
}

describe.skipIf(!available).each(KIT_DATASETS)('kit dataset $name through deno serve', ({ name, baseUrl, prefix }) => {
  it("every kit answer matches, every page equals its file, and /openapi.json is the site's", async () => {
    const { site, project } = await denoProject(name, baseUrl);
    expect(project.deploy).toBe('deno serve --v8-flags=--max-semi-space-size=2 --allow-read=../site/ main.js');
    // The kit and /openapi.json over HTTP to main.js; every page through it in Deno, compared by digest.
    await writeDigestEntry(project.out, 'main.js');
    const server = await denoServe(project.out, project.deploy.replace(/main\.js$/, DIGEST_ENTRY));
    try {
      await expectWholeKit(server.url, name, prefix, totals);
      await expectPagesAsFiles(server.url, site, baseUrl, totals, pagesDifferingByDigest);
      const openapi = await fetch(`${server.url}/openapi.json`);
      expect(openapi.status).toBe(200);
      expect(Buffer.from(await openapi.arrayBuffer()).equals(await readFile(join(site, 'openapi.json')))).toBe(true);
    } finally {
      await server.stop();
    }
  }, 600_000);
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
