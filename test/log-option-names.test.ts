import { execFileSync } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, CitiesApiError, formatProblem, readDataset, SAMPLE_DATASET, serve } from '../src/index.js';
import { optionNamed, wordingOf } from '../src/core/errors.js';
import { inFlags } from '../src/cli/options.js';
import { BEHIND_PATH } from '../src/site/behind.js';
import { cli } from './cli-helpers.js';
import { startCli, SMALL_SITE } from './serve-helpers.js';
import { tempDir } from './helpers.js';

// A message that reaches a reader not thrown but as a log line (a --watch rebuild that failed, a
// writable server's catch-up) names options as its reader gave them, as a thrown error does
// (test/library-option-names.test.ts): the CLI's user reads the flag (--site), serve()'s caller its
// own name (`dir`); an error copied into another keeps the options it names for both.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-log-option-names-'));
});
afterAll(async () => {
  await cleanup();
});

/** Whether this process can make a directory that even root cannot change (chattr +i): a rebuild's failure on the site directory. */
const canFreeze = (() => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('chattr', ['--help'], { stdio: 'ignore' });
  } catch (error) {
    return (error as { status?: number }).status !== undefined;
  }
  return true;
})();
const frozen = (dir: string, on: boolean) => execFileSync('chattr', [on ? '+i' : '-i', dir]);

/** Waits (up to 20 s) for `lines()` to hold a line matching `pattern`. */
async function lineOf(lines: () => string, pattern: RegExp): Promise<string> {
  for (let waited = 0; waited < 20_000; waited += 100) {
    const line = lines()
      .split('\n')
      .find((l) => pattern.test(l));
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no line matching ${pattern} in:\n${lines()}`);
}

/** A served site under `name` whose dataset is edited once the site is built, the site directory frozen: the rebuild fails on it. */
async function failedRebuild(
  name: string,
  start: (site: string, data: string) => Promise<{ lines: () => string; stop: () => Promise<void> }>,
): Promise<{ line: string; all: string }> {
  const data = join(root, `${name}.csv`);
  const site = join(root, name, 'site');
  await cp(SAMPLE_DATASET, data);
  const server = await start(site, data);
  frozen(site, true);
  try {
    const text = await readFile(data, 'utf8');
    await writeFile(data, `${text.trimEnd().split('\n').slice(0, -1).join('\n')}\n`);
    const line = await lineOf(server.lines, /changed but was not used/);
    return { line, all: server.lines() };
  } finally {
    frozen(site, false);
    await server.stop();
  }
}

describe.skipIf(!canFreeze)('a --watch rebuild that failed: its log line names options as the reader gave them', () => {
  it.each<
    [string, (site: string, data: string) => Promise<{ lines: () => string; stop: () => Promise<void> }>, string]
  >([
    [
      'the CLI (serve --watch) says the flag',
      async (site, data) => {
        const server = await startCli([
          '--site',
          site,
          '--data',
          data,
          '--watch',
          '--port',
          '0',
          '--quiet',
          ...SMALL_SITE,
        ]);
        return { lines: server.output, stop: server.stop };
      },
      'or choose another with --site',
    ],
    [
      "serve({ watch }) gives its log the caller's name",
      async (site, data) => {
        const lines: string[] = [];
        const server = await serve({
          dir: site,
          data,
          watch: true,
          port: 0,
          orderings: ['default'],
          pageSizes: [10],
          collation: 'codepoint',
          log: (line) => lines.push(line),
        });
        return { lines: () => lines.join('\n'), stop: () => server.close() };
      },
      'or choose another with `dir`',
    ],
  ])('%s', async (name, start, said) => {
    const { line, all } = await failedRebuild(name.replace(/\W+/g, '-'), start);
    expect(line).toContain(said);
    expect(all).not.toContain('\u0000');
  });
});

describe('a warning, or a line a server logs at start, names options as its reader gave them', () => {
  /** A dataset with a column that is not a city field: read with a warning naming the option that refuses it. */
  let extra: string;
  /** A site marked behind its dataset: a server of it without a dataset says how to catch up. */
  let behind: string;
  const SMALL = { orderings: ['default'], pageSizes: [10], collation: 'codepoint', compression: 'none' } as const;
  const SMALL_CLI = [
    '--orderings',
    'default',
    '--page-sizes',
    '10',
    '--collation',
    'codepoint',
    '--compression',
    'none',
  ];
  beforeAll(async () => {
    extra = join(root, 'extra.csv');
    const [header, ...rows] = (await readFile(SAMPLE_DATASET, 'utf8')).trimEnd().split('\n');
    await writeFile(extra, `${header},population\n${rows.map((row) => `${row},5`).join('\n')}\n`);
    behind = join(root, 'behind');
    await build({ data: SAMPLE_DATASET, out: behind, ...SMALL });
    await mkdir(dirname(join(behind, BEHIND_PATH)), { recursive: true });
    await writeFile(join(behind, BEHIND_PATH), '');
  });

  it.each<[string, () => Promise<string>, string]>([
    [
      "the CLI (validate) says the flag in an unknown column's warning",
      async () => (await cli(root, 'validate', '--data', extra)).stderr,
      '(not a city field; --strict refuses it)',
    ],
    [
      "build({ onWarning }) gives the caller's name",
      async () => {
        const warnings: string[] = [];
        await build({
          data: extra,
          out: join(root, 'extra-site'),
          ...SMALL,
          onWarning: (w) => warnings.push(formatProblem(w)),
        });
        return warnings.join('\n');
      },
      '(not a city field; `strict` refuses it)',
    ],
    [
      "the CLI (build --base-url Netlify's files cannot hold) says the flag in the warning, once",
      async () => {
        const run = await cli(
          root,
          'build',
          '--data',
          SAMPLE_DATASET,
          '--site',
          join(root, 'netlify-cli'),
          ...SMALL_CLI,
          '--base-url',
          'https://example.org/:v1/',
        );
        expect(run.code).toBe(0);
        const said = run.stderr.split('\n').filter((line) => line.includes("Netlify's rules"));
        expect(said).toHaveLength(1);
        return said.join('\n');
      },
      'the site leaves out Netlify\'s rules for its endpoint (_headers, and _redirects but the rules hiding its own files under /_cities-api/) for the base URL "https://example.org/:v1": Netlify reads its path segment ":v1" as a placeholder, matching any segment, and has no escape for it; to deploy to Netlify, answer the endpoint with cities-api edge netlify (its edge function routes the endpoint itself), or choose a --base-url whose path segments neither start with ":" nor hold "*"',
    ],
    [
      "build({ baseUrl, onWarning }) of a base URL Netlify's files cannot hold gives the caller's name, once",
      async () => {
        const warnings: string[] = [];
        await build({
          data: SAMPLE_DATASET,
          out: join(root, 'netlify-site'),
          ...SMALL,
          baseUrl: 'https://example.org/a*b',
          onWarning: (w) => warnings.push(formatProblem(w)),
        });
        expect(warnings).toHaveLength(1);
        return warnings.join('\n');
      },
      'Netlify reads its path segment "a*b" as a wildcard, matching any text, and has no escape for it; to deploy to Netlify, answer the endpoint with cities-api edge netlify (its edge function routes the endpoint itself), or choose a `baseUrl` whose',
    ],
    [
      "readDataset(file, { onWarning }) gives the caller's name",
      async () => {
        const warnings: string[] = [];
        await readDataset(extra, { onWarning: (w) => warnings.push(w.reason) });
        return warnings.join('\n');
      },
      '(not a city field; `strict` refuses it)',
    ],
    [
      'the CLI (serve --site of a site marked behind) says the flags',
      async () => {
        const server = await startCli([behind, '--port', '0', '--quiet']);
        await server.stop();
        return server.output();
      },
      'build it again from its dataset (cities-api build), or serve it with --data (and --writable)',
    ],
    [
      "serve({ dir, log }) of a site marked behind gives its log the caller's names",
      async () => {
        const lines: string[] = [];
        const server = await serve({ dir: behind, port: 0, log: (line) => lines.push(line) });
        await server.close();
        return lines.join('\n');
      },
      'build it again from its dataset (cities-api build), or serve it with `data` (and `writable`)',
    ],
  ])('%s', async (_, said, expected) => {
    const text = await said();
    expect(text).toContain(expected);
    expect(text).not.toContain('\u0000');
  });
});

describe('an error copied into another keeps the options it names', () => {
  const inner = new CitiesApiError(`cannot write the site (${optionNamed('site')})`);
  const outer = new CitiesApiError(`the rebuild failed: ${wordingOf(inner)}`);
  it.each<[string, string, string]>([
    ['a library caller reads the key', outer.message, 'the rebuild failed: cannot write the site (`site`)'],
    ['the CLI reads the flag', inFlags(outer), 'the rebuild failed: cannot write the site (--site)'],
    ['an error not ours is its message', wordingOf(new Error('plain')), 'plain'],
  ])('%s', (_, said, expected) => {
    expect(said).toBe(expected);
    expect(said).not.toContain('\u0000');
  });
});
