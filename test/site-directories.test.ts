import { readdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { siteDirectories } from '../src/site/layout.js';
import { parseOrderings } from '../src/site/spec.js';
import { tempDir } from './helpers.js';

// A build makes siteDirectories() before any file: it must list exactly the directories a site
// holds (a missing one is only made later, an extra one would be an empty directory in the site).

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-dirs-'));
  await writeFile(join(root, 'empty.json'), '[]\n');
});
afterAll(() => cleanup());

async function directoriesIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isDirectory()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

describe('siteDirectories lists exactly the directories of a built site', () => {
  it.each<[string, string, string[], number[]]>([
    ['the bundled cities, two orderings', 'data/cities.csv', ['default', '-name_fr'], [20]],
    ['the bundled cities, every ordering and size', 'data/cities.csv', ['all'], [10, 20, 50, 100]],
    ['no cities (no edge chunks)', '<empty>', ['name_en'], [10]],
  ])('%s', async (name, data, orderings, pageSizes) => {
    const out = join(root, name.replace(/\W+/g, '-'));
    const result = await build({
      data: data === '<empty>' ? join(root, 'empty.json') : join(import.meta.dirname, '..', data),
      out,
      orderings,
      pageSizes,
      compress: false,
    });
    const spec = { count: result.cities, orderings: parseOrderings(orderings), pageSizes };
    expect(siteDirectories(spec).sort()).toEqual((await directoriesIn(out)).sort());
  });
});
