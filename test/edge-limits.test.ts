import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { writeEdgeProject } from '../src/app/edge-project.js';
import { amount, limitsTable, type Measure } from '../src/platforms/limits.js';
import { PLATFORMS, RECIPES, type Platform } from '../src/platforms/recipes.js';
import { KIT, readTree, tempDir } from './helpers.js';

// Each platform's documented limits (its recipe's table) checked by `cities-api edge` before it
// writes anything: one case per platform and limit the deployment is measured against, each on a
// small site over a lowered figure of that limit (the internal `limits` option), never a huge
// build. Over a limit: exit code 2, the limit named with its figure, the site's figure, where the
// limit comes from and what to do, and no file written, in the project or in the site.

const ROOT = join(import.meta.dirname, '..');
let root: string;
let site: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  const temp = await tempDir('edge-limits-');
  ({ dir: root, cleanup } = temp);
  site = join(root, 'site');
  await build({ data: join(KIT, 'cities48.csv'), out: site, baseUrl: 'https://api.example.com', pageSizes: [10] });
}, 120_000);
afterAll(() => cleanup());

/** Where `edge` writes: Netlify's project holds the site (it publishes it), the others a folder of their own. */
const outOf = (platform: Platform) => (platform === 'netlify' ? root : join(root, `edge-${platform}`));

const refused = PLATFORMS.flatMap((platform) =>
  RECIPES[platform].limits
    .filter((l) => l.measure && !l.adapts)
    .map((limit) => ({ platform, measure: limit.measure!, limit })),
);

describe('edge refuses a site over a limit of its platform, before writing anything', () => {
  it('every platform with files to deploy has a limit checked on them', () => {
    expect(new Set(refused.map((c) => c.platform))).toEqual(new Set(['cloudflare', 'lambda', 'netlify']));
  });

  it.each(refused.map((c) => [`${c.platform}: ${c.limit.what}`, c] as const))('%s', async (_, { platform, limit }) => {
    const before = await readTree(root);
    const run = writeEdgeProject(platform, site, outOf(platform), { limits: { [limit.measure!]: 1 } });
    const error = await run.then(
      () => null,
      (e: unknown) => e as { exitCode: number; message: string },
    );
    expect(error?.exitCode).toBe(2);
    const line = error!.message.split('\n').find((l) => l.includes(limit.what));
    expect(line).toContain(`, over the ${amount(1, limit.unit)} ${RECIPES[platform].title} takes (${limit.source})`);
    expect(line).toContain(limit.advice);
    const figure = Number(/: ([\d,]+) (?:bytes|files)/.exec(line!)![1]!.replace(/,/g, ''));
    expect(figure).toBeGreaterThan(1);
    expect(error!.message).toContain(RECIPES[platform].doc);
    expect([...(await readTree(root)).keys()]).toEqual([...before.keys()]);
  });

  it.each<[string, Platform, Measure]>([
    ['Cloudflare: the assets published at the real figure of files, the plan is within it', 'cloudflare', 'files'],
    ['Lambda: the package unzipped within its real figure', 'lambda', 'packageBytes'],
  ])('%s', async (_, platform, measure) => {
    const project = await writeEdgeProject(platform, site, outOf(platform), {
      limits: { [measure]: RECIPES[platform].limits.find((l) => l.measure === measure)!.figure },
    });
    expect(project.files.length).toBeGreaterThan(1);
  });

  it('Lambda: a package under the unzipped limit but over the direct upload is deployed from S3', async () => {
    const out = join(root, 'edge-lambda-s3');
    const direct = await writeEdgeProject('lambda', site, out);
    expect(direct.deploy).toContain('--zip-file fileb://function.zip');
    const zip = (await readFile(join(out, 'function.zip'))).length;
    const s3 = await writeEdgeProject('lambda', site, out, { limits: { zipBytes: zip - 1 } });
    expect(s3.deploy).toMatch(
      /^aws s3 cp function.zip s3:\/\/BUCKET\/function.zip && .* --s3-bucket BUCKET --s3-key function.zip$/,
    );
  });
});

describe("each platform's guide lists its limits, from the recipe's table", () => {
  it.each(PLATFORMS)('%s', async (platform) => {
    const { doc, limits } = RECIPES[platform];
    expect(await readFile(join(ROOT, doc), 'utf8')).toContain(limitsTable(limits));
  });
});
