import { execFileSync } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CitiesApiError, SAMPLE_DATASET, serve } from '../src/index.js';
import { optionNamed, wordingOf } from '../src/core/errors.js';
import { inFlags } from '../src/cli/options.js';
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
