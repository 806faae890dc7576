import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as library from '../src/index.js';
import {
  build,
  cloudFrontFunction,
  netlifyHeaders,
  netlifyRedirects,
  nginxConfig,
  openApiDocument,
  readManifest,
  SAMPLE_DATASET,
  specOf,
  type BuildResult,
} from '../src/index.js';
import { tempDir } from './helpers.js';

// The package entry as a library user calls it: build() with only a dataset and a directory,
// then every host's configuration from the built site.

let dir: string;
let cleanup: () => Promise<void>;
let result: BuildResult;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('cities-lib-'));
  result = await build({ data: SAMPLE_DATASET, out: join(dir, 'site') });
}, 120_000);
afterAll(() => cleanup());

describe('build({ data, out }): the defaults of the CLI', () => {
  it.each([
    ['base URL (and the plan says it was defaulted)', () => expect(result.defaultBaseUrl).toBe(true)],
    [
      'collation locale, page sizes 10,20,50,100, every ordering, compressed',
      async () => {
        const { settings } = (await readManifest(join(dir, 'site')))!;
        expect(settings).toMatchObject({
          baseUrl: 'http://localhost:8080',
          collation: 'locale',
          pageSizes: [10, 20, 50, 100],
          compression: 'fast',
          liveUrl: null,
        });
        expect(settings.orderings).toHaveLength(33);
      },
    ],
    [
      'links on the default base URL',
      async () => {
        const page = JSON.parse(await readFile(join(dir, 'site/cities/default/default/1.json'), 'utf8')) as {
          next: string;
        };
        expect(page.next).toBe('http://localhost:8080/cities/?page=2');
      },
    ],
  ])('%s', async (_, check) => {
    await check();
  });

  it('a base URL given is not a default', async () => {
    const again = await build({
      data: SAMPLE_DATASET,
      out: join(dir, 'other'),
      baseUrl: 'https://example.org',
      orderings: ['default'],
      pageSizes: [20],
      compression: 'none',
    });
    expect(again.defaultBaseUrl).toBe(false);
  });
});

describe('host generators are exported and work from a built site', () => {
  it.each([
    [
      'nginxConfig',
      (spec: library.SiteSpec) => nginxConfig(spec, { liveUrl: 'http://127.0.0.1:8080', site: join(dir, 'site') }),
      /location/,
    ],
    ['cloudFrontFunction', (spec: library.SiteSpec) => cloudFrontFunction(spec), /function handler/],
    ['netlifyRedirects', (spec: library.SiteSpec) => netlifyRedirects(spec), /\/cities\//],
    ['netlifyHeaders', (spec: library.SiteSpec) => netlifyHeaders(spec), /Content-Type/i],
    ['openApiDocument', (spec: library.SiteSpec) => JSON.stringify(openApiDocument(spec)), /"openapi"/],
  ])('%s', async (_, generate, expected) => {
    const spec = specOf((await readManifest(join(dir, 'site')))!);
    expect(generate(spec)).toMatch(expected);
  });
});
