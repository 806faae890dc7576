import { cp, mkdir, readdir, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { writeEdgeProject } from '../src/app/edge-project.js';
import { ROUTES } from '../src/core/route-table.js';
import { LAYOUTS, rankPath } from '../src/site/edge-files.js';
import { blocksOf, parseIndex } from '../src/site/edge-index.js';
import { KIT, tempDir } from './helpers.js';

// `cities-api edge lambda`'s package: the edge index, every rank file and the default ordering's
// layout of the site (one copy of the cities: at 140k cities the build's six layouts are 428 MB,
// over Lambda's 250 MiB unzipped, one is 71 MB), measured as zipped, and each file checked before
// it is: a site caught between two builds, a file cut short or missing, or a symbolic link (which
// would zip what it points to) is refused, naming the file, and nothing of the project is written.

let root: string;
let cleanup: () => Promise<void>;
/** cities1234 (its name fields in different orders: several layouts) and cities48 (another build). */
let site: string;
let other: string;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('edge-lambda-package-'));
  [site, other] = [join(root, 'site'), join(root, 'other')];
  const options = { baseUrl: 'https://api.example.com', pageSizes: [10], orderings: ['default'] };
  await build({ data: join(KIT, 'cities1234.json'), out: site, ...options });
  await build({ data: join(KIT, 'cities48.csv'), out: other, ...options });
}, 120_000);
afterAll(() => cleanup());

/** The site paths of the files a package holds of `dir`'s edge data, as its index names them. */
async function packaged(dir: string): Promise<string[]> {
  const index = parseIndex(await readFile(join(dir, ROUTES.edge.index)));
  const { starts, path } = blocksOf(index, ROUTES.absent);
  return [ROUTES.edge.index, ...LAYOUTS.map(rankPath), ...starts.map((_, b) => path(b)), ROUTES.extras.openapi];
}

const sizeOf = async (path: string) => (await stat(path)).size;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('the package: one layout of the cities, measured as it is zipped', () => {
  it('the limit at its exact unzipped bytes: written; a byte less: refused (the build’s layouts together are far over it)', async () => {
    const out = join(root, 'exact');
    const first = await writeEdgeProject('lambda', site, out);
    expect(first.warnings).toEqual([]);
    const own = await Promise.all(
      ['index.mjs', 'cities-api-edge.js', 'cities-site.js'].map((f) => sizeOf(join(out, f))),
    );
    const bytes = sum([...own, ...(await Promise.all((await packaged(site)).map((f) => sizeOf(join(site, f)))))]);
    const edge = await readdir(join(site, ROUTES.edge.dir), { recursive: true, withFileTypes: true });
    const everyLayout = sum(
      await Promise.all(edge.filter((e) => e.isFile()).map((e) => sizeOf(join(e.parentPath, e.name)))),
    );
    // What the package leaves out: the other layouts, more than the whole package.
    expect(everyLayout - bytes).toBeGreaterThan(bytes / 2);
    expect((await writeEdgeProject('lambda', site, out, { limits: { packageBytes: bytes } })).files).toContain(
      'function.zip',
    );
    const refused = await writeEdgeProject('lambda', site, join(root, 'exact-less'), {
      limits: { packageBytes: bytes - 1 },
    }).catch((e: { exitCode: number; message: string }) => e);
    expect(refused).toMatchObject({ exitCode: 2 });
    expect((refused as { message: string }).message).toContain(
      `deployment package, unzipped: ${bytes.toLocaleString('en-US')} bytes`,
    );
  });
});

type Spoil = (dir: string, files: string[]) => Promise<void>;
const blockOf = (files: string[]) => files.find((f) => f.includes('/rows/'))!;
const rankOf = (files: string[]) => files.find((f) => f.includes('/ranks/'))!;

describe('a site whose edge data cannot be packaged is refused, nothing written', () => {
  it.each<[string, Spoil, RegExp]>([
    [
      'a block of another build',
      async (dir, files) => {
        const theirs = (await packaged(other)).find((f) => f.includes('/rows/'))!;
        await cp(join(other, theirs), join(dir, blockOf(files)));
      },
      /cannot be packaged: .*rows\/.* is from another build than the edge index \(its data tag differs\): rebuild the site/,
    ],
    [
      'a rank file of another build',
      async (dir, files) => cp(join(other, rankOf(files)), join(dir, rankOf(files))),
      /cannot be packaged: .*ranks\/.* is from another build than the edge index/,
    ],
    [
      'a block cut short',
      async (dir, files) => truncate(join(dir, blockOf(files)), (await sizeOf(join(dir, blockOf(files)))) - 100),
      /cannot be packaged: .*rows\/.* cannot be read: its cities end elsewhere than the file: rebuild the site/,
    ],
    [
      'a rank file cut short',
      async (dir, files) => truncate(join(dir, rankOf(files)), 100),
      /cannot be packaged: .*ranks\/.* cannot be read: it is shorter than its header says/,
    ],
    [
      'a block missing',
      async (dir, files) => rm(join(dir, blockOf(files))),
      /rows\/.*\.bin is missing: rebuild the site \(cities-api build\), then run edge lambda again/,
    ],
    [
      'a block that is a symbolic link to a file elsewhere',
      async (dir, files) => {
        const elsewhere = join(root, `elsewhere-${Math.random()}.bin`);
        await cp(join(dir, blockOf(files)), elsewhere);
        await rm(join(dir, blockOf(files)));
        await symlink(elsewhere, join(dir, blockOf(files)));
      },
      /rows\/.*\.bin is a symbolic link: edge lambda packages only the site's own files/,
    ],
    [
      'the rank files behind a symbolic link to a directory elsewhere',
      async (dir) => {
        const elsewhere = join(root, `ranks-${Math.random()}`);
        await cp(join(dir, ROUTES.edge.dir, 'ranks'), elsewhere, { recursive: true });
        await rm(join(dir, ROUTES.edge.dir, 'ranks'), { recursive: true });
        await symlink(elsewhere, join(dir, ROUTES.edge.dir, 'ranks'));
      },
      /ranks\/.*\.bin is reached through a symbolic link: edge lambda packages only the site's own files/,
    ],
    [
      'an index of another format',
      async (dir) => writeFile(join(dir, ROUTES.edge.index), '{"format":1}\n'),
      /index\.json is not an edge index of format 2: rebuild the site with this version/,
    ],
  ])('%s', async (name, spoil, message) => {
    const dir = join(root, `spoilt-${name.replace(/\W+/g, '-')}`);
    await cp(site, dir, { recursive: true });
    await spoil(dir, await packaged(site));
    const out = join(root, `project-${name.replace(/\W+/g, '-')}`);
    const refused = await writeEdgeProject('lambda', dir, out).catch((e: { exitCode: number; message: string }) => e);
    expect(refused).toMatchObject({ exitCode: 1, message: expect.stringMatching(message) });
    await expect(stat(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('index.mjs, the user’s own', () => {
  it.each([
    ['as this version writes it: no warning', null, false],
    [
      'as an earlier version wrote it (no `open`): answers all the same, and a warning saying what to add',
      "import { readFile } from 'node:fs/promises';\nimport { lambdaHandler, lambdaStreamingHandler } from './cities-api-edge.js';\nimport site from './cities-site.js';\n\nconst read = (path) => readFile(new URL(path, import.meta.url));\nexport const handler = lambdaHandler(site, read);\nexport const streamingHandler = lambdaStreamingHandler(site, read);\n",
      true,
    ],
  ])('%s', async (_, entry, warned) => {
    const out = join(root, `entry-${warned}`);
    if (entry) {
      await mkdir(out, { recursive: true });
      await writeFile(join(out, 'index.mjs'), entry);
    }
    const { warnings } = await writeEdgeProject('lambda', site, out);
    expect(warnings.some((w) => /gives the handlers no `open`/.test(w))).toBe(warned);
  });
});
