import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { readManifest } from '../src/store/manifest-file.js';
import { parseQuery } from '../src/core/query-string.js';
import { staticPathFor } from '../src/site/layout.js';
import { siteSpec } from '../src/site/spec.js';
import { KIT, KIT_DATASETS, kitAnswers, readTree, tempDir } from './helpers.js';
import { kitSite } from './edge-helpers.js';

// Every `core` GET answer of the kit whose request the static site covers must equal, body and
// status, the file that request maps to. Requests the site does not cover are answered live
// (serve tests); here they are only counted.
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-kit-')));
afterAll(() => cleanup());

const totals = { covered: 0, core: 0 };

describe.each(KIT_DATASETS)('kit dataset $name', ({ name, baseUrl }) => {
  // Built from the CSV without .gz/.br (this file reads only the pages; compression.test checks those).
  let built: string;
  const site = () => built;
  beforeAll(async () => {
    built = await kitSite(name, baseUrl);
  });

  it('every covered core answer equals its file', async () => {
    const manifest = await readManifest(site());
    const settings = siteSpec(manifest!.settings, manifest!.dataset.count);
    let covered = 0;
    const core = (await kitAnswers(name)).filter((a) => a.level === 'core' && a.method === 'GET');
    for (const want of core) {
      const path = staticPathFor(parseQuery(want.target.split('?')[1] ?? ''), settings);
      if (!path) continue;
      covered++;
      expect.soft(want.status, `${want.target} is covered by ${path}`).toBe(200);
      expect.soft(JSON.parse(readFileSync(join(site(), path), 'utf8')), `${want.target} → ${path}`).toEqual(want.json);
    }
    totals.covered += covered;
    totals.core += core.length;
    console.log(`${name}: ${covered} of ${core.length} core GET answers covered by static files, all equal`);
    expect(covered).toBeGreaterThanOrEqual(40);
  });

  it('builds the same bytes from the JSON form of the dataset', async () => {
    const fromJson = join(root, `${name}-json`);
    await build({
      data: join(KIT, `${name}.json`),
      out: fromJson,
      baseUrl,
      collation: 'codepoint',
      pageSizes: [10, 20, 50, 100],
      compress: false,
    });
    // The pages: the manifest records the input file's digest, which differs.
    const pages = (tree: Map<string, Buffer>) =>
      new Map([...tree].filter(([path]) => path.endsWith('.json') && !path.endsWith('manifest.json')));
    const a = pages(await readTree(site()));
    const b = pages(await readTree(fromJson));
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [path, bytes] of a)
      if (!bytes.equals(b.get(path)!)) expect.fail(`${path} differs between CSV and JSON input`);
  });
});

afterAll(() => {
  console.log(`conformance (static files): ${totals.covered} of ${totals.core} core GET answers covered, all equal`);
});
