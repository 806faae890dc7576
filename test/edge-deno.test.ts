import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIT_DATASETS, expectWholeKit, tempDir } from './helpers.js';
import { buildKitSite, DENO, denoServe, expectPagesAsFiles, kitEdgeProject } from './edge-helpers.js';
import { requireTool } from './tool-check.js';

// `cities-api edge deno` under a real `deno serve` (the npm `deno` package's binary): the whole kit,
// every level (400/400), and every built page byte for byte, all computed from the site's edge files.

const available = requireTool('deno', DENO, 'npm ci (deno is a dev dependency)');

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-edge-deno-')));
afterAll(() => cleanup());

const totals = { passed: 0, failed: 0, pages: 0 };

describe.skipIf(!available).each(KIT_DATASETS)('kit dataset $name through deno serve', ({ name, baseUrl, prefix }) => {
  it('every kit answer matches and every page equals its file', async () => {
    const { site, project } = await kitEdgeProject(root, name, baseUrl, 'deno');
    expect(project.deploy).toBe('deno serve --allow-read=../site/ main.js');
    const server = await denoServe(project.out, project.deploy);
    try {
      await expectWholeKit(server.url, name, prefix, totals);
      await expectPagesAsFiles(server.url, site, baseUrl, totals);
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
      const { site, project } = await kitEdgeProject(root, first, baseUrl, 'deno', `rebuilt-${first}`);
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
