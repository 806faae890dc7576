import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_LOCK_WAIT } from '../src/app/build-options.js';
import { OPTIONS } from '../src/cli/options.js';
import { CitiesApiError } from '../src/core/errors.js';
import { cli } from './cli-helpers.js';
import { KIT } from './helpers.js';

// How long a lock is waited for when none is asked: the library's DEFAULT_LOCK_WAIT (ms), which the
// CLI's --lock-wait (seconds) restated as a literal 10 that a change of the library's would have
// left behind. Here the library's is made 7 s: the CLI's default, its --help and what it passes to
// build() and serve() must all follow it.

vi.mock('../src/app/build-options.js', async (original) => ({
  ...(await original<object>()),
  DEFAULT_LOCK_WAIT: 7_000,
}));
/** build() and serve() as the CLI calls them: they keep the options they were given, and stop there. */
const stop = vi.hoisted(() =>
  vi.fn((_: { lockWait?: number }) => {
    throw new CitiesApiError('stopped here by the test', 1);
  }),
);
vi.mock('../src/app/build.js', async (original) => ({ ...(await original<object>()), buildForCli: stop }));
vi.mock('../src/app/serve.js', async (original) => ({ ...(await original<object>()), serveForCli: stop }));

const DATA = join(KIT, 'cities11.csv');

describe("--lock-wait's default is the library's DEFAULT_LOCK_WAIT, in seconds", () => {
  it('the library constant is the one this test set (7 s)', () => {
    expect(DEFAULT_LOCK_WAIT).toBe(7_000);
  });

  it.each(['build', 'serve'])('%s --help says it as the default', async (command) => {
    const { stdout } = await cli(KIT, command, '--help');
    // Commander wraps the help: the option's line and its continuation, as one.
    const line = stdout.replace(/\s+/g, ' ');
    expect(line).toMatch(/--lock-wait <seconds> [^-]*\(default: 7\)/);
  });

  it.each([
    ['build', ['build', '--data', DATA, '--site', join(KIT, 'nowhere')]],
    ['serve', ['serve', '--data', DATA, '--site', join(KIT, 'nowhere')]],
  ])("%s without --lock-wait passes the library's default to build() or serve() (in ms)", async (_, args) => {
    stop.mockClear();
    const run = await cli(KIT, ...args);
    expect(run.stderr).toContain('stopped here by the test');
    expect(stop.mock.lastCall?.[0].lockWait).toBe(DEFAULT_LOCK_WAIT);
  });

  it("the option table's default (which the README's table shows)", () => {
    expect(OPTIONS.find((option) => option.key === 'lockWait')?.default).toBe(DEFAULT_LOCK_WAIT / 1000);
  });
});
