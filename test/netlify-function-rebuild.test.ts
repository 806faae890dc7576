import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type BuildOptions } from '../src/app/build.js';
import { writeEdgeProject } from '../src/app/edge-project.js';
import { functionRedirects, NETLIFY_FUNCTION_PATH } from '../src/app/netlify-function-rules.js';
import { ROUTES } from '../src/core/route-table.js';
import { netlifyRedirects } from '../src/hosts/netlify.js';
import { specOf } from '../src/site/manifest.js';
import { readManifestHead } from '../src/store/manifest-file.js';
import { KIT, tempDir } from './helpers.js';

// `edge netlify` points the site's `_redirects` at its function; the next `cities-api build` of the
// site (a data change, the workflow's run) must keep them so, or the function silently stops being
// called and uncovered queries get the 404. A --live-url of the build's own wins.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-netlify-rebuild-')));
afterAll(() => cleanup());

const base = {
  baseUrl: 'https://api.example.org/v1',
  collation: 'codepoint',
  pageSizes: [10, 20],
  compress: false,
} as const;
const FUNCTION_RULE = `${NETLIFY_FUNCTION_PATH}/v1/cities/  200!`;

/** A project: the site built from the kit's 11 cities, `edge netlify` run on it (or not), then `rebuild` changing its input. */
async function rebuilt(
  name: string,
  { edge = true, rebuild = {} as Partial<BuildOptions>, tamper = (text: string) => text } = {},
) {
  const dir = join(root, name);
  const site = join(dir, 'dist');
  const data = join(dir, 'cities.csv');
  await mkdir(dir, { recursive: true });
  await copyFile(join(KIT, 'cities11.csv'), data);
  await build({ ...base, data, out: site });
  if (edge) await writeEdgeProject('netlify', site, dir);
  const redirects = join(site, ROUTES.extras.netlifyRedirects);
  await writeFile(redirects, tamper(await readFile(redirects, 'utf8')));
  const result = await build({ ...base, data, out: site, ...rebuild });
  const spec = specOf((await readManifestHead(site))!);
  return { text: await readFile(redirects, 'utf8'), spec, result, site, data };
}

describe('a rebuild of a site `edge netlify` set up', () => {
  it.each([
    ['the same input', {}],
    ['another dataset (48 cities)', { data: join(KIT, 'cities48.csv') }],
    ['other page sizes', { pageSizes: [5, 50] }],
    ['--force', { force: true }],
  ] as const)('%s: still sends uncovered queries to the function', async (what, rebuild) => {
    const { text, spec } = await rebuilt(`same-${what.replace(/\W+/g, '-')}`, { rebuild });
    expect(text).toBe(functionRedirects(spec));
    expect(text).toContain(FUNCTION_RULE);
  });

  it('stays so over further builds, and an unchanged input then writes nothing', async () => {
    const { site, data } = await rebuilt('twice');
    const again = await build({ ...base, data, out: site });
    expect(again.upToDate).toBe(true);
    expect(await readFile(join(site, ROUTES.extras.netlifyRedirects), 'utf8')).toContain(FUNCTION_RULE);
  });

  it('a --live-url given to the build wins: the rules point at it', async () => {
    const { text, spec } = await rebuilt('live', { rebuild: { liveUrl: 'https://live.example.org' } });
    expect(text).toBe(netlifyRedirects(spec));
    expect(text).toContain('https://live.example.org/v1/cities/  200!');
    expect(text).not.toContain(NETLIFY_FUNCTION_PATH);
  });
});

describe('a rebuild of any other site writes the rules of its settings', () => {
  it.each([
    ['a site never set up for the function', { edge: false }],
    [
      'rules edited by hand after edge netlify (no longer what it wrote)',
      { tamper: (t: string) => t.replace(/^(\S+)/m, '$1 ') },
    ],
    [
      "rules someone pointed at the function path by hand (not byte for byte edge netlify's)",
      { edge: false, tamper: (t: string) => `${t}/x  ${NETLIFY_FUNCTION_PATH}/x  200!\n` },
    ],
  ] as const)('%s', async (what, options) => {
    const { text, spec } = await rebuilt(`other-${what.replace(/\W+/g, '-').slice(0, 40)}`, options);
    expect(text).toBe(netlifyRedirects(spec));
    expect(text).toContain(`/${ROUTES.extras.notPrecomputed}  404!`);
  });
});
