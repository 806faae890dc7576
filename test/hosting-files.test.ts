import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { ROUTES } from '../src/core/route-table.js';
import { cloudFrontFunction } from '../src/hosts/cloudfront.js';
import { notPrecomputedJson } from '../src/hosts/not-precomputed.js';
import { specOf } from '../src/site/manifest.js';
import { readManifest } from '../src/store/manifest-file.js';
import { netlifyHeaders, netlifyRedirects } from '../src/hosts/netlify.js';
import { openApiDocument } from '../src/hosts/openapi.js';
import { KIT, tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-hosting-')));
afterAll(() => cleanup());

describe('the build writes what static hosts need, from the site’s own settings', () => {
  it.each([
    ['without a live server', undefined],
    ['with a live server', 'https://live.example.org'],
  ])('%s', async (_, liveUrl) => {
    const site = join(root, liveUrl ? 'live' : 'static');
    await build({
      data: join(KIT, 'cities11.csv'),
      out: site,
      baseUrl: 'https://example.org/api/v1',
      collation: 'codepoint',
      pageSizes: [5],
      orderings: ['default', 'name_en'],
      compress: false,
      liveUrl,
    });
    const manifest = (await readManifest(site))!;
    expect(manifest.settings.liveUrl).toBe(liveUrl ?? null);
    const settings = specOf(manifest);
    expect(settings).toMatchObject({
      baseUrl: 'https://example.org/api/v1',
      mount: '/api/v1',
      count: 11,
      pageSizes: [5],
      orderings: ['default', 'name_en'],
      liveUrl: liveUrl ?? null,
    });
    const file = (path: string) => readFile(join(site, path), 'utf8');
    expect(await file('_redirects')).toBe(netlifyRedirects(settings));
    expect(await file('_headers')).toBe(netlifyHeaders(settings));
    expect(JSON.parse(await file('openapi.json'))).toEqual(openApiDocument(settings));
    expect(await file(ROUTES.extras.notPrecomputed)).toBe(notPrecomputedJson([5]));
    expect(await file(ROUTES.extras.cloudfront)).toBe(cloudFrontFunction(settings));
    const extras = Object.values(ROUTES.extras).filter((path) => path !== ROUTES.extras.manifest);
    expect(Object.keys(manifest.files)).toEqual(expect.arrayContaining(extras));
  });
});
