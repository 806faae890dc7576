import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// answerOnOwnThread() (proc/answering-flags.ts), as the CLI's own process calls it, in a child
// process that then makes a few dozen young-generation collections: --trace-gc-nvp says for each
// how long V8's helper threads took part in it (background.scavenge.parallel, ms). Without it, the
// control, they take part in most: a handed-over job whose signal can block (the flags' comment).
const FLAGS = pathToFileURL(join(import.meta.dirname, '..', 'lib', 'proc', 'answering-flags.js')).href;

/** The helpers' part (ms) in each young-generation collection of a child, after `before` runs. */
function helpersPerScavenge(before: string): number[] {
  const script = `${before}
    let kept = [];
    for (let i = 0; i < 3e6; i++) { kept.push({ i }); if (kept.length > 1e4) kept = []; }`;
  const out = execFileSync(process.execPath, ['--trace-gc-nvp', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter((line) => / gc=s /.test(line))
    .map((line) => Number(/background\.scavenge\.parallel=([\d.]+)/.exec(line)![1]));
}

describe('the answering process collects its young generation on its own thread', () => {
  it.each([
    ['after answerOnOwnThread(): no helper thread in any collection', true],
    ['without it (the control): helper threads in some', false],
  ])(
    '%s',
    (_, called) => {
      const helped = helpersPerScavenge(
        called ? `const { answerOnOwnThread } = await import(${JSON.stringify(FLAGS)}); answerOnOwnThread();` : '',
      );
      expect(helped.length).toBeGreaterThan(10);
      const withHelpers = helped.filter((ms) => ms > 0).length;
      if (called) expect(withHelpers).toBe(0);
      else expect(withHelpers).toBeGreaterThan(0);
    },
    60_000,
  );
});
