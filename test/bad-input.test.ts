import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli-helpers.js';
import { readTree, tempDir } from './helpers.js';

// The bad-input corpus (test/fixtures/bad/): every file is refused by the CLI with exit code 1,
// one problem located by file, line (and JSON record), field and value, no stack trace, and the
// site built before left exactly as it was. `cases.json` is the expected table. The table runs the
// CLI in-process (runMain, as bin/cities-api.js does); the compiled CLI, as a process, is checked
// to answer one case byte for byte the same, and runs the GitHub Actions rows (whose env it reads).

const ROOT = join(import.meta.dirname, '..');
const BAD = join(import.meta.dirname, 'fixtures', 'bad');

interface BadCase {
  readonly file: string;
  /** What the file checks (the test's name). */
  readonly checks: string;
  /** CSV: the physical line; JSON: the line the record (or the broken text) is on. */
  readonly line: number;
  /** JSON: the record's index and id. */
  readonly record?: number;
  readonly id?: unknown;
  /** The field and its value as printed, when the problem is in one field. */
  readonly field?: string;
  readonly value?: string;
  /** A substring of the reason. */
  readonly reason: string;
  /** More arguments for the build (e.g. --strict). */
  readonly args?: readonly string[];
}

const CASES = JSON.parse(readFileSync(join(BAD, 'cases.json'), 'utf8')) as BadCase[];

/** Runs `node bin/cities-api.js ...` from the repository root (not in GitHub Actions, unless `env` says so). */
async function cliProcess(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliIn({ GITHUB_ACTIONS: '' }, ...args);
}

async function cliIn(
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [join(ROOT, 'bin/cities-api.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** SHA-256 of every file under dir (hidden ones included), by relative path. */
async function treeHashes(dir: string): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  for (const [path, bytes] of await readTree(dir)) hashes[path] = createHash('sha256').update(bytes).digest('hex');
  return hashes;
}

let root: string;
let cleanup: () => Promise<void>;
let before: Record<string, string>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-api-bad-'));
  const built = await cli(
    ROOT,
    'build',
    '--data',
    'data/cities.csv',
    '--out',
    join(root, 'site'),
    '--page-sizes',
    '20',
    '--orderings',
    'default,-name_ar',
    '--base-url',
    'https://example.org',
  );
  expect(built, 'the site to protect must build').toMatchObject({ code: 0, stderr: '' });
  before = await treeHashes(root);
  expect(Object.keys(before).length).toBeGreaterThan(30);
});
afterAll(() => cleanup());

describe('the bad-input corpus', () => {
  it('cases.json lists every fixture once', () => {
    const fixtures = readdirSync(BAD)
      .filter((name) => /\.(csv|json)$/.test(name) && name !== 'cases.json')
      .sort();
    expect(CASES.map((c) => c.file).sort()).toEqual(fixtures);
  });
});

/** Runs the CLI in-process from the repository root, not in GitHub Actions. */
async function cliHere(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const saved = process.env.GITHUB_ACTIONS;
  process.env.GITHUB_ACTIONS = '';
  try {
    return await cli(ROOT, ...args);
  } finally {
    if (saved === undefined) delete process.env.GITHUB_ACTIONS;
    else process.env.GITHUB_ACTIONS = saved;
  }
}

const buildArgs = (c: BadCase) => [
  'build',
  '--data',
  `test/fixtures/bad/${c.file}`,
  '--out',
  join(root, 'site'),
  ...(c.args ?? []),
];

describe('build refuses a bad dataset, says where, and leaves the site as it was', () => {
  it.each(CASES.map((c) => [c.checks, c] as const))('%s', async (_, c) => {
    const data = `test/fixtures/bad/${c.file}`;
    const run = await cliHere(...buildArgs(c));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).not.toContain('    at ');
    // Named as given: relative.
    const file = data;
    const [heading, problem, ...rest] = run.stderr.split('\n');
    expect(heading).toBe(`cities-api: invalid dataset ${file} (1 problem; nothing was written):`);
    const record =
      c.record === undefined ? '' : `record ${c.record}${c.id === undefined ? '' : ` (id ${JSON.stringify(c.id)})`}: `;
    const field = c.field === undefined ? '' : `field ${c.field}, value ${c.value}: `;
    expect(problem!.startsWith(`  ${file}:${c.line}: ${record}${field}`), problem).toBe(true);
    expect(problem).toContain(c.reason);
    expect(rest).toEqual(['']);
    expect(await treeHashes(root)).toEqual(before);
  });
});

describe('the compiled CLI, as a process', () => {
  it('refuses a bad dataset with the same exit code, stdout and stderr as in-process, no stack trace, the site as it was', async () => {
    const c = CASES.find((c) => c.file === 'id-duplicate.csv')!;
    const run = await cliProcess(...buildArgs(c));
    expect(run).toEqual(await cliHere(...buildArgs(c)));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^cities-api: invalid dataset test\/fixtures\/bad\/id-duplicate\.csv \(1 problem; nothing was written\):\n {2}test\/fixtures\/bad\/id-duplicate\.csv:4: field id, value 1: duplicates the id of line 2\n$/,
    );
    expect(await treeHashes(root)).toEqual(before);
  });
});

describe('under GitHub Actions each problem is also an annotation on its file and line', () => {
  const duplicate = 'test/fixtures/bad/id-duplicate.csv';
  const annotation = `::error file=${duplicate},line=4,title=cities-api%3A invalid dataset::field id, value 1: duplicates the id of line 2`;
  it.each([
    ['a relative path, as given', duplicate, {}],
    ['a ./ path, without its ./', `./${duplicate}`, {}],
    ['an absolute path, relative to GITHUB_WORKSPACE', join(ROOT, duplicate), { GITHUB_WORKSPACE: ROOT }],
  ])('%s', async (_, data, env) => {
    const run = await cliIn({ GITHUB_ACTIONS: 'true', ...env }, 'validate', '--data', data);
    expect(run.code).toBe(1);
    const lines = run.stderr.split('\n');
    expect(lines[0]).toBe(`cities-api: invalid dataset ${data} (1 problem; nothing was written):`);
    expect(lines.filter((line) => line.startsWith('::'))).toEqual([annotation]);
  });

  it.each([
    [
      'not in GitHub Actions: one warning line',
      { GITHUB_ACTIONS: '' },
      'cities-api: warning: test/fixtures/bad/header-unknown-column.csv:1: ignored unknown column "population" (not a city field; --strict refuses it)',
    ],
    [
      'in GitHub Actions: a warning annotation',
      { GITHUB_ACTIONS: 'true' },
      '::warning file=test/fixtures/bad/header-unknown-column.csv,line=1,title=cities-api::ignored unknown column "population" (not a city field; --strict refuses it)',
    ],
  ])('an unknown column is ignored, %s', async (_, env, warning) => {
    const run = await cliIn(env, 'validate', '--data', 'test/fixtures/bad/header-unknown-column.csv');
    expect(run).toEqual({
      code: 0,
      stdout: 'test/fixtures/bad/header-unknown-column.csv: 3 cities, valid\n',
      stderr: `${warning}\n`,
    });
  });
});
