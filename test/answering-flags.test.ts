import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { SMALL_SITE } from './serve-helpers.js';

// The answering flags (proc/answering-flags.ts): serve's worker processes start with them
// (serve-workers.test.ts reads their command lines). Here, in a child process that makes a few
// dozen young-generation collections, what they do and where they are not: --trace-gc-nvp says
// for each collection how long V8's helper threads took part in it (background.scavenge.parallel,
// ms). Without the flags, the control, they take part in most: a handed-over job whose signal can
// block (the flags' comment).
const ROOT = join(import.meta.dirname, '..');
const lib = (module: string) => JSON.stringify(pathToFileURL(join(ROOT, 'lib', module)).href);
const CLI = join(ROOT, 'bin', 'cities-api.js');
/** What ANSWERING_FLAGS holds unless a bench turns them off (the last rows check it). */
const FLAGS = ['--no-parallel-scavenge', '--no-concurrent-array-buffer-sweeping'];

const MARK = 'collections from here';

/** The helpers' part (ms) in each young-generation collection of a child run with `flags`, after `before` runs. */
function helpersPerScavenge(flags: readonly string[], before: string): number[] {
  // Only the collections after the marker: a serve's start-up collected before it set anything.
  const script = `${before}
    console.log('${MARK}');
    let kept = [];
    for (let i = 0; i < 3e6; i++) { kept.push({ i }); if (kept.length > 1e4) kept = []; }
    process.exit(0);`;
  const out = execFileSync(process.execPath, [...flags, '--trace-gc-nvp', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return out
    .slice(out.indexOf(MARK))
    .split('\n')
    .filter((line) => / gc=s /.test(line))
    .map((line) => Number(/background\.scavenge\.parallel=([\d.]+)/.exec(line)![1]));
}

let site: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  site = await tempDir('cities-api-flags-');
  execFileSync(
    process.execPath,
    [CLI, 'build', '--data', join(ROOT, 'data', 'cities.csv'), '--site', site.dir, ...SMALL_SITE],
    {
      stdio: 'ignore',
    },
  );
}, 60_000);
afterAll(() => site?.cleanup());

/** `serve --workers 1` run by the CLI in the child's own process, answering once it says so. */
const servingHere = () => `
  const { runMain } = await import(${lib('cli/main.js')});
  const { Writable } = await import('node:stream');
  let said = '';
  const out = new Writable({ write(chunk, _, done) { said += chunk; done(); } });
  void runMain({ rawArgs: ['serve', '--site', ${JSON.stringify(site.dir)}, '--port', '0', '--workers', '1', '--quiet'], stdout: out, stderr: out });
  while (!/serving /.test(said)) {
    if (/error/.test(said)) throw new Error(said);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }`;

describe('the answering flags: the young generation collected on the answering thread', () => {
  it.each([
    ['a process started with the flags (a serve worker): no helper thread in any collection', FLAGS, () => '', false],
    ['the control, V8 defaults: helper threads in some', [], () => '', true],
    ["serve --workers 1: the CLI's own process keeps V8's defaults, helper threads in some", [], servingHere, true],
  ])(
    '%s',
    (_, flags, before, helped) => {
      const parts = helpersPerScavenge(flags, before());
      expect(parts.length).toBeGreaterThan(10);
      const withHelpers = parts.filter((ms) => ms > 0).length;
      if (helped) expect(withHelpers).toBeGreaterThan(0);
      else expect(withHelpers).toBe(0);
    },
    60_000,
  );

  it.each([
    ['unset: the two flags', undefined, FLAGS],
    ["CITIES_API_ANSWERING_FLAGS=none (the benches' control): none", 'none', []],
    ['any other value: the two flags', 'off', FLAGS],
  ])('%s', (_, value, expected) => {
    const env = { ...process.env, CITIES_API_ANSWERING_FLAGS: value };
    if (value === undefined) delete env.CITIES_API_ANSWERING_FLAGS;
    const script = `const { ANSWERING_FLAGS } = await import(${lib('proc/answering-flags.js')});
      console.log(JSON.stringify(ANSWERING_FLAGS));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env });
    expect(JSON.parse(out)).toEqual(expected);
  });
});
