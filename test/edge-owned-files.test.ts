import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { OWNED_RECORD, PLATFORMS, writeEdgeProject, type Platform } from '../src/app/edge-project.js';
import { ROUTES } from '../src/core/route-table.js';
import { NETLIFY_EDGE_DIR } from '../src/platforms/netlify/recipe.js';
import { DEFAULT_PAGE_SIZES } from '../src/site/spec.js';
import { cli } from './cli-helpers.js';
import { killStragglers, spawnNode } from './crash-helpers.js';
import { KIT } from './helpers.js';
import { splitCode } from './markdown.js';
import { ROOT } from './serve-helpers.js';

// `cities-api edge` writes into folders the user owns (often the repository's root, for Netlify):
// it replaces only files it wrote and nobody changed since, and otherwise refuses, writing nothing.
// The user's own files of the project (the platform's config, the entry module) it writes once,
// when missing, and never again: a rerun keeps the user's edits and updates only cities-api's files.

let root: string;
let n = 0;
/** Where each platform writes files of its own (cities-api's, not the user's), from a first run into a folder of its own. */
const written = new Map<Platform, string[]>();

/** A project folder holding the site built once (and its stat cache beside it): each fresh() is a copy of it. */
let pristine: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'cities-edge-owned-'));
  pristine = join(root, 'pristine');
  await buildSite(join(pristine, 'dist'), 'http://127.0.0.1:1');
  for (const platform of PLATFORMS) {
    const { site, out } = await fresh(platform);
    const project = await writeEdgeProject(platform, site, out);
    written.set(
      platform,
      project.files.filter((file) => !project.userFiles.includes(file)).map((file) => relativeTo(out, site, file)),
    );
  }
}, 120_000);
afterAll(() => rm(root, { recursive: true, force: true }));

/**
 * A built site inside a project folder (as Netlify needs it), both new: a copy of the one build
 * (cp -a keeps the times; the same bytes a build writes, at a fraction of a build's cost).
 */
async function fresh(platform: Platform): Promise<{ site: string; out: string }> {
  const out = join(root, `p${n++}`);
  const site = join(out, 'dist');
  execFileSync('cp', ['-a', pristine, out]);
  return { site, out: platform === 'netlify' ? out : join(out, `edge-${platform}`) };
}

/** The site built from the 11-city kit dataset with links on `baseUrl`. */
function buildSite(site: string, baseUrl: string) {
  return build({
    data: join(KIT, 'cities11.csv'),
    out: site,
    baseUrl,
    collation: 'codepoint',
    pageSizes: DEFAULT_PAGE_SIZES,
    compress: false,
  });
}

/** The site built once for each base URL (a directory holding it as `dist`, with its stat cache beside it). */
const builds = new Map<string, Promise<string>>();

/**
 * A data change for the edge project: the site rebuilt with links on `baseUrl`. One build per base
 * URL, copied over the project's site (cp -a): a build's files depend on its input only, and these
 * are the same 11 cities (no file added or removed), so the site holds what a rebuild in place
 * would write, at a fraction of its cost (10 builds of the file's 11 were rebuilds).
 */
async function rebuild(site: string, baseUrl: string): Promise<void> {
  let built = builds.get(baseUrl);
  if (!built) {
    const dir = join(root, `built-${builds.size}`);
    builds.set(baseUrl, (built = buildSite(join(dir, 'dist'), baseUrl).then(() => dir)));
  }
  execFileSync('cp', ['-a', `${await built}/.`, dirname(site)]);
}

/** A written file as a path relative to the project folder `out`'s parent, so it names the same file in another project. */
function relativeTo(out: string, site: string, file: string): string {
  const path = isAbsolute(file) ? file : join(out, file);
  return path.slice(dirname(site).length + 1);
}

const cases = PLATFORMS.flatMap((platform) =>
  ['a file of the user', 'a symbolic link to a file of the user', 'a folder'].map((kind) => [platform, kind] as const),
);

describe.each(cases)('edge %s refuses to replace %s at any of its paths, writing nothing', (platform, kind) => {
  it('each path in turn: the thing is left as it was, and no other file is written', async () => {
    for (const file of written.get(platform)!) {
      const { site, out } = await fresh(platform);
      const path = join(dirname(site), file);
      const before = await snapshot(platform, site, out, path);
      await mkdir(dirname(path), { recursive: true });
      await rm(path, { force: true }); // the site's own _redirects, in the Netlify case
      if (kind === 'a folder') await mkdir(path);
      else if (kind === 'a file of the user') await writeFile(path, 'mine\n');
      else {
        await writeFile(join(root, `target-${n}`), 'mine\n');
        await symlink(join(root, `target-${n}`), path);
      }
      await expect(writeEdgeProject(platform, site, out), file).rejects.toMatchObject({
        exitCode: 2,
        message: expect.stringContaining(path),
      });
      if (kind === 'a file of the user') expect(await readFile(path, 'utf8')).toBe('mine\n');
      if (kind === 'a symbolic link to a file of the user') {
        expect(await readlink(path)).toBe(join(root, `target-${n}`));
        expect(await readFile(path, 'utf8')).toBe('mine\n');
      }
      if (kind === 'a folder') expect((await lstat(path)).isDirectory()).toBe(true);
      expect(await snapshot(platform, site, out, path)).toEqual(before);
    }
  }, 120_000);
});

describe('edge writes nothing through a symbolic link out of --out', () => {
  it.each<[Platform, string]>([
    ['netlify', 'netlify'],
    ['netlify', 'netlify/edge-functions'],
  ])('edge %s with %s/ a link to a folder elsewhere: refused, nothing written there', async (platform, linked) => {
    const { site, out } = await fresh(platform);
    const elsewhere = join(root, `elsewhere-${n++}`);
    await mkdir(elsewhere);
    await mkdir(dirname(join(out, linked)), { recursive: true });
    await symlink(elsewhere, join(out, linked));
    await expect(writeEdgeProject(platform, site, out)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/a symbolic link out of/),
    });
    expect(await readdir(elsewhere)).toEqual([]);
  });
});

describe('edge into a symbolic link to a folder elsewhere: the site named as the platform finds it from there', () => {
  it.each<[Platform, string, (text: string) => string]>([
    ['deno', 'cities-site.js', (text) => JSON.parse(/siteDir = (".*?");/.exec(text)![1]!)],
    ['cloudflare', 'wrangler.jsonc', (text) => JSON.parse(text.slice(text.indexOf('{'))).assets.directory],
  ])("edge %s: %s leads from the link's target to the site", async (platform, file, siteOf) => {
    const { site, out } = await fresh(platform);
    const elsewhere = join(root, `elsewhere-${n++}`, 'project');
    await mkdir(elsewhere, { recursive: true });
    await symlink(elsewhere, out);
    await writeEdgeProject(platform, site, out);
    const named = resolve(elsewhere, siteOf(await readFile(join(out, file), 'utf8')));
    expect((await lstat(join(named, ROUTES.extras.manifest))).isFile()).toBe(true);
  });
});

/** Every path the platform writes, with its contents or absence, `skip` left out. */
async function snapshot(
  platform: Platform,
  site: string,
  out: string,
  skip?: string,
): Promise<Record<string, string | null>> {
  const paths = [...written.get(platform)!.map((file) => join(dirname(site), file)), join(out, OWNED_RECORD)].filter(
    (p) => p !== skip,
  );
  return Object.fromEntries(
    await Promise.all(paths.map(async (p) => [p, await readFile(p, 'utf8').catch(() => null)] as const)),
  );
}

describe.each(PLATFORMS)('edge %s replaces what it wrote', (platform) => {
  it.each<[string, (site: string, out: string) => Promise<unknown>, boolean]>([
    ['a second run over its own unchanged files', async () => {}, true],
    [
      'a run after a data change (new settings, same files of ours)',
      (site) => rebuild(site, 'http://127.0.0.1:2'),
      true,
    ],
    ['files identical to what it writes, its record lost', async (_site, out) => rm(join(out, OWNED_RECORD)), true],
    [
      'a file of its own the user edited since: refused',
      async (site) =>
        writeFile(join(dirname(site), written.get(platform)!.find((f) => f.endsWith('cities-site.js'))!), 'edited\n'),
      false,
    ],
    [
      'a record that is not its own: refused',
      async (_site, out) => writeFile(join(out, OWNED_RECORD), '{"hello": 1}\n'),
      false,
    ],
  ])(
    '%s',
    async (_name, between, allowed) => {
      const { site, out } = await fresh(platform);
      await writeEdgeProject(platform, site, out);
      await between(site, out);
      const run = writeEdgeProject(platform, site, out);
      if (allowed) await expect(run).resolves.toMatchObject({ platform });
      else await expect(run).rejects.toMatchObject({ exitCode: 2 });
    },
    60_000,
  );
});

describe('a run cut short between its record and its files', () => {
  // Run 2 (after a data change) stopped after recording its new contents, before writing cities-site.js.
  it.each([
    ['is finished by the next run: the record accepts the old and the new contents', true],
    ['would be refused with a record of the new contents only (the reason the record holds both)', false],
  ])('%s', async (_name, both) => {
    const { site, out } = await fresh('cloudflare');
    await writeEdgeProject('cloudflare', site, out);
    const old = await readFile(join(out, 'cities-site.js'));
    const first = await readRecord(out);
    await rebuild(site, 'http://127.0.0.1:3');
    await writeEdgeProject('cloudflare', site, out);
    const second = await readRecord(out);
    expect(second['cities-site.js']).not.toEqual(first['cities-site.js']);
    await writeFile(join(out, 'cities-site.js'), old);
    const merged = Object.fromEntries(
      Object.entries(second).map(([path, hashes]) => [path, both ? [...first[path]!, ...hashes] : hashes]),
    );
    await writeFile(join(out, OWNED_RECORD), JSON.stringify({ generator: 'cities-api edge', files: merged }));
    const run = writeEdgeProject('cloudflare', site, out);
    if (!both) return expect(run).rejects.toMatchObject({ exitCode: 2 });
    await run;
    expect(await readFile(join(out, 'cities-site.js'), 'utf8')).toContain('127.0.0.1:3');
    expect(Object.values(await readRecord(out)).every((hashes) => hashes.length === 1)).toBe(true);
  });
});

async function readRecord(out: string): Promise<Record<string, string[]>> {
  return (JSON.parse(await readFile(join(out, OWNED_RECORD), 'utf8')) as { files: Record<string, string[]> }).files;
}

/** A user's edit to each of their files (a Worker's name and routes, Netlify's build environment, a line of their own). */
const EDITS: Record<Platform, [string, (text: string) => string][]> = {
  cloudflare: [
    [
      'wrangler.jsonc',
      (t) =>
        t.replace(
          '"name": "cities-api",',
          '"name": "my-worker",\n  "routes": [{ "pattern": "api.example.org/*", "zone_name": "example.org" }],',
        ),
    ],
    ['worker.js', (t) => `${t}// my line\n`],
  ],
  deno: [['main.js', (t) => `${t}// my line\n`]],
  netlify: [
    ['netlify.toml', (t) => `${t}\n[build.environment]\n  NODE_VERSION = "22"\n`],
    [`${NETLIFY_EDGE_DIR}/cities-api.mjs`, (t) => `${t}// my line\n`],
  ],
  lambda: [['index.mjs', (t) => `${t}// my line\n`]],
};

describe.each(PLATFORMS)('edge %s after the user edited their files', (platform) => {
  it("a rerun after a data change exits 0: their edits intact, cities-api's files updated", async () => {
    const { site, out } = await fresh(platform);
    const first = await writeEdgeProject(platform, site, out);
    expect([...first.userFiles].sort()).toEqual(EDITS[platform].map(([file]) => file).sort());
    const edited = new Map<string, string>();
    for (const [file, edit] of EDITS[platform]) {
      const text = edit(await readFile(join(out, file), 'utf8'));
      await writeFile(join(out, file), text);
      edited.set(file, text);
    }
    await rebuild(site, 'http://127.0.0.1:2');
    const result = await cli(dirname(site), 'edge', platform, '--site', site, '--out', out);
    // (A site built for any host: edge cloudflare's one warning says to build --for cloudflare.)
    const stderr = result.stderr.replace(/^cities-api: warning: .*build --for cloudflare.*\n/m, '');
    expect({ code: result.code, stderr }, result.stderr).toEqual({ code: 0, stderr: '' });
    for (const [file, text] of edited) expect(await readFile(join(out, file), 'utf8'), file).toBe(text);
    const data = written.get(platform)!.find((f) => f.endsWith('cities-site.js'))!;
    expect(await readFile(join(dirname(site), data), 'utf8')).toContain('127.0.0.1:2');
    // Lambda's zip holds the user's entry as it stands.
    if (platform === 'lambda')
      expect(execFileSync('unzip', ['-p', join(out, 'function.zip'), 'index.mjs'], { encoding: 'utf8' })).toBe(
        edited.get('index.mjs'),
      );
  }, 60_000);

  it('no generated file holds a path of the building machine', async () => {
    const { site, out } = await fresh(platform);
    const project = await writeEdgeProject(platform, site, out);
    const holding = [];
    for (const file of project.files) {
      const bytes = await readFile(isAbsolute(file) ? file : join(out, file));
      if (bytes.includes(root)) holding.push(file);
    }
    expect(holding).toEqual([]);
    expect(project.deploy).not.toContain(root);
  });
});

it("the static guide's netlify.toml (docs/netlify.md) is the edge function's too: kept as it is", async () => {
  const { site, out } = await fresh('netlify');
  const toml = await netlifyGuideToml();
  await writeFile(join(out, 'netlify.toml'), toml);
  const result = await cli(out, 'edge', 'netlify', '--site', site, '--out', '.');
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
  expect(await readFile(join(out, 'netlify.toml'), 'utf8')).toBe(toml);
});

it.each([
  ['publishes no directory', '[build]\n  command = "make"\n', 'set publish = "dist" under [build]'],
  ['publishes another directory', '[build]\n  publish = "public"\n', 'set publish = "dist" under [build]'],
  [
    'moves the edge functions elsewhere',
    '[build]\n  publish = "dist"\n  edge_functions = "edge"\n',
    'remove that line',
  ],
])('a netlify.toml that %s: the CLI names it and the fix, exit 2, the file kept', async (_name, toml, fix) => {
  const { site, out } = await fresh('netlify');
  await writeFile(join(out, 'netlify.toml'), toml);
  const result = await cli(out, 'edge', 'netlify', '--site', site, '--out', '.');
  expect(result).toMatchObject({ code: 2, stdout: '' });
  expect(result.stderr).toContain(join(out, 'netlify.toml'));
  expect(result.stderr).toContain(fix);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(await readFile(join(out, 'netlify.toml'), 'utf8')).toBe(toml);
});

/** The netlify.toml docs/netlify.md has the user write. */
async function netlifyGuideToml(): Promise<string> {
  const doc = await readFile(join(import.meta.dirname, '..', 'docs', 'netlify.md'), 'utf8');
  const blocks = splitCode(doc).blocks.filter((b) => b.lang === 'toml');
  expect(blocks.length).toBe(1);
  return `${blocks[0]!.text}\n`;
}

it('a --project that is a file: the CLI names it and says what to do, exit 1, the file kept', async () => {
  const { site, out } = await fresh('deno');
  await writeFile(out, 'mine\n');
  const result = await cli(dirname(site), 'edge', 'deno', '--site', site, '--project', out);
  expect(result).toMatchObject({ code: 1, stdout: '' });
  expect(result.stderr).toContain(out);
  expect(result.stderr).toContain('--project');
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(await readFile(out, 'utf8')).toBe('mine\n');
});

describe('edge killed (SIGKILL) between writing a draft (.NAME.PID.TOKEN.draft) and placing it', () => {
  // The run kills itself as it would rename or link the draft of the file named in KILL_AT: its
  // draft stays in the project folder, as a power loss would leave it. No later run has its pid.
  let killer: string;
  beforeAll(async () => {
    killer = join(root, 'killer.mjs');
    await writeFile(
      killer,
      `import fs from 'node:fs/promises';
import { basename } from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
const at = (from) => basename(String(from)).startsWith(\`.\${process.env.KILL_AT}.\`) && String(from).endsWith('.draft');
for (const step of ['rename', 'link']) {
  const real = fs[step];
  fs[step] = (from, to) => (at(from) ? process.kill(process.pid, 'SIGKILL') : real(from, to));
}
syncBuiltinESMExports();
`,
    );
  });
  afterAll(() => killStragglers());

  /** Whether `name` is a draft of `file` by process `pid` (`.NAME.PID.TOKEN.draft`). */
  const isDraft = (file: string, pid: number, name: string) =>
    name.startsWith(`.${file}.${pid}.`) && name.endsWith('.draft');
  /** Every entry under `dir`, sorted. */
  const entries = async (dir: string) => (await readdir(dir, { recursive: true })).sort();

  it.each([
    ['the record of its files, written first', OWNED_RECORD],
    ['a file of its own (renamed over)', 'cities-site.js'],
    ["a user's file, created when missing (linked)", 'worker.js'],
  ])('at %s: the next run leaves the project folder as a run never killed does', async (_, file) => {
    const clean = await fresh('cloudflare');
    await writeEdgeProject('cloudflare', clean.site, clean.out);

    const { site, out } = await fresh('cloudflare');
    const args = ['edge', 'cloudflare', '--site', site, '--project', out];
    const killed = spawnNode(['--import', killer, join(ROOT, 'bin/cities-api.js'), ...args], { KILL_AT: file });
    expect((await killed.exited).signal).toBe('SIGKILL');
    expect((await readdir(out)).filter((name) => isDraft(file, killed.child.pid!, name))).toHaveLength(1);

    const rerun = await cli(dirname(site), 'edge', 'cloudflare', '--site', site, '--project', out);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(await entries(dirname(site))).toEqual(await entries(dirname(clean.site)));
  });

  // A draft is removed by the next run that writes its file: one whose file the user then made is never written again.
  it.each([
    ["a user's file created when missing, which the user then wrote themselves: the rerun keeps it", 'worker.js', 0],
    ['a file of its own, which the user then replaced with theirs: the rerun refuses, keeping it', 'cities-site.js', 2],
  ])('at %s; the dead run’s draft is removed all the same', async (_, file, code) => {
    const { site, out } = await fresh('cloudflare');
    const args = ['edge', 'cloudflare', '--site', site, '--project', out];
    const killed = spawnNode(['--import', killer, join(ROOT, 'bin/cities-api.js'), ...args], { KILL_AT: file });
    expect((await killed.exited).signal).toBe('SIGKILL');
    expect((await readdir(out)).filter((name) => isDraft(file, killed.child.pid!, name))).toHaveLength(1);
    await writeFile(join(out, file), '// mine\n');

    const rerun = await cli(dirname(site), 'edge', 'cloudflare', '--site', site, '--project', out);
    expect(rerun.code, rerun.stderr).toBe(code);
    expect(await readFile(join(out, file), 'utf8')).toBe('// mine\n');
    expect((await entries(dirname(site))).filter((entry) => entry.endsWith('.draft'))).toEqual([]);
  });
});
