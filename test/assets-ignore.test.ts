import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetsIgnore, filesOver } from '../src/app/edge-project.js';
import { tempDir } from './helpers.js';

// Cloudflare refuses a deploy holding an asset over 25 MiB (at 140k cities, the page of all
// cities): `edge cloudflare` lists each such file of the site in .assetsignore, by its site path.

let work: Awaited<ReturnType<typeof tempDir>>;
let site: string;
const bytes = (n: number) => Buffer.alloc(n, 0x61);

beforeAll(async () => {
  work = await tempDir('cities-assets-ignore-');
  site = join(work.dir, 'site');
  await mkdir(join(site, 'cities/default'), { recursive: true });
  await mkdir(join(site, 'cities/-name_en'), { recursive: true });
  await mkdir(join(work.dir, 'elsewhere'), { recursive: true });
  await writeFile(join(site, 'cities/default/all-3.json'), bytes(101));
  await writeFile(join(site, 'cities/-name_en/all-3.json'), bytes(150));
  await writeFile(join(site, 'cities/default/1.json'), bytes(100));
  await writeFile(join(site, 'openapi.json'), bytes(20));
  await writeFile(join(work.dir, 'elsewhere/big.json'), bytes(500));
  await symlink(join(work.dir, 'elsewhere/big.json'), join(site, 'cities/linked.json'));
  await symlink(join(work.dir, 'elsewhere'), join(site, 'cities/linked-dir'));
});
afterAll(() => work.cleanup());

describe("filesOver: the site's files larger than the limit", () => {
  it.each<[string, number, string[]]>([
    [
      'files over the limit, by site path, sorted (one at the limit is not over it)',
      100,
      ['cities/-name_en/all-3.json', 'cities/default/all-3.json'],
    ],
    ['none when every file is within the limit', 150, []],
    [
      "a symbolic link (to a file or a folder) is not one of the site's files",
      10,
      ['cities/-name_en/all-3.json', 'cities/default/1.json', 'cities/default/all-3.json', 'openapi.json'],
    ],
  ])('%s', async (_name, limit, expected) => {
    expect(await filesOver(site, limit)).toEqual(expected);
  });
});

describe('assetsIgnore', () => {
  it.each<[string, string[], string[]]>([
    [
      "keeps the site's own files off the CDN, the edge data excepted",
      [],
      ['_cities-api/*', '!_cities-api/edge/', '_redirects', '_headers'],
    ],
    [
      "lists each file too large, anchored at the site's root",
      ['cities/default/all-140000.json'],
      ['/cities/default/all-140000.json'],
    ],
  ])('%s', (_name, tooLarge, lines) => {
    expect(assetsIgnore(tooLarge).split('\n')).toEqual(expect.arrayContaining(lines));
  });

  it("a too-large file is not re-included by the edge data's negation (it comes after it)", () => {
    const lines = assetsIgnore(['_cities-api/edge/huge.bin']).split('\n');
    expect(lines.indexOf('/_cities-api/edge/huge.bin')).toBeGreaterThan(lines.indexOf('!_cities-api/edge/'));
  });
});
