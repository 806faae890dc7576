import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestJson, MANIFEST_PATH, type ManifestHead } from '../src/site/manifest.js';
import { readManifest, readManifestHead } from '../src/write/manifest-file.js';
import { tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-manifest-')));
afterAll(() => cleanup());

const head: ManifestHead = {
  generator: 'cities-api',
  version: '1.0.0',
  settings: { baseUrl: 'https://example.org', collation: 'codepoint', pageSizes: [10], orderings: ['default'], defaultPageSize: 10, compress: true, liveUrl: null },
  dataset: { count: 2, sha256: 'ab' },
};

describe('manifestJson writes what JSON.stringify of the sorted manifest would, and both readers read it back', () => {
  it.each<[string, Record<string, string>]>([
    ['no files', {}],
    ['files out of order', { 'cities/default/default/2.json': 'b', 'cities/default/default/1.json': 'a', '_headers': 'c' }],
    ['paths that need escaping', { 'odd/"quoted"\\name.json': 'x', 'é/ü.json': 'y' }],
  ])('%s', async (name, files) => {
    const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const text = manifestJson(head, files);
    expect(text).toBe(`${JSON.stringify({ ...head, files: sorted }, null, 1)}\n`);
    const dir = join(root, name.replaceAll(' ', '-'));
    await mkdir(join(dir, '_cities-api'), { recursive: true });
    await writeFile(join(dir, MANIFEST_PATH), text);
    expect(await readManifest(dir)).toEqual({ ...head, files: sorted });
    expect(await readManifestHead(dir)).toEqual(head);
  });
});
