import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from '../src/app/build.js';
import { writeEdgeProject, type EdgeProject, type Platform } from '../src/app/edge-project.js';
import { quotePlus } from '../src/core/query-string.js';
import { endpointPath } from '../src/core/route-table.js';
import { DEFAULT_PAGE_SIZES } from '../src/site/spec.js';
import { queryForFile } from '../src/site/layout.js';
import { readManifest } from '../src/write/manifest-file.js';
import { expect } from 'vitest';
import { mountOf } from '../src/core/url-path.js';
import { KIT } from './helpers.js';
import type { CityIndex } from '../src/core/city-index.js';
import { bodyBytes } from '../src/core/page.js';
import { edgeFiles } from '../src/site/edge-files.js';

// The edge runtime tests' shared steps: a kit dataset's site built as the serve kit test builds it,
// its edge project written by `cities-api edge`'s own function, and every page file with its query.

export async function kitEdgeProject(root: string, name: string, baseUrl: string, platform: Platform, dir = name, out = join(root, dir, platform)): Promise<{ site: string; project: EdgeProject }> {
  const site = join(root, dir, 'site');
  await build({ data: join(KIT, `${name}.csv`), out: site, baseUrl, collation: 'codepoint', pageSizes: DEFAULT_PAGE_SIZES, compress: false });
  return { site, project: await writeEdgeProject(platform, site, out) };
}

/** Every page file of a built site, with the request target (on the site's mount) it answers. */
export async function pageTargets(site: string, mount: string): Promise<{ file: string; target: string }[]> {
  const manifest = (await readManifest(site))!;
  const pages: { file: string; target: string }[] = [];
  for (const file of Object.keys(manifest.files)) {
    const pairs = queryForFile(`/${file}`, []);
    if (!pairs) continue;
    const query = pairs.map(([k, v]) => `${quotePlus(k)}=${quotePlus(v)}`).join('&');
    pages.push({ file, target: `${endpointPath(mount)}${query ? `?${query}` : ''}` });
  }
  return pages;
}

/** Fetches every page's target from `url` (a few at a time) and lists those whose bytes differ from the file. */
export async function pagesDiffering(url: string, site: string, pages: readonly { file: string; target: string }[], fetchPage: (target: string) => Promise<Uint8Array> = async (t) => new Uint8Array(await (await fetch(new URL(t, url))).arrayBuffer())): Promise<string[]> {
  const differing: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < pages.length) {
      const { file, target } = pages[next++]!;
      const [got, want] = await Promise.all([fetchPage(target), readFile(join(site, file))]);
      if (!Buffer.from(got).equals(want)) differing.push(`${target} (${file})`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return differing;
}

/** Asks `url` for every page of `site` (built for `baseUrl`), counts them in `totals`, and expects each to equal its file byte for byte. */
export async function expectPagesAsFiles(url: string, site: string, baseUrl: string, totals: { pages: number }): Promise<{ file: string; target: string }[]> {
  const pages = await pageTargets(site, mountOf(baseUrl));
  totals.pages += pages.length;
  expect(await pagesDiffering(url, site, pages)).toEqual([]);
  return pages;
}

/** A site's edge files in memory, and every path read from them. */
export function memoryEdgeSite(index: CityIndex, tag = '00112233445566ff') {
  const files = new Map([...edgeFiles(index, tag)].map((f) => [f.path, new Uint8Array(bodyBytes(f.body))]));
  const reads: string[] = [];
  const read = async (path: string) => {
    reads.push(path);
    const bytes = files.get(path);
    if (!bytes) throw new Error(`no file ${path}`);
    return bytes;
  };
  return { files, reads, read };
}
