import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { following, printed, testTimeLeft } from './started-process.js';

// Waiting for a started process: on its output or its exit, bounded by the test's own timeout.

/** `node -e script`, followed. */
function node(script: string) {
  return following(spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] }), 'the script');
}

describe('a start waited for on the process itself', () => {
  it.each([
    [
      'its URL, printed late (after 2 s)',
      'setTimeout(() => console.log("serving at http://127.0.0.1:1234"), 2000); setTimeout(() => {}, 60000)',
      { url: 'http://127.0.0.1:1234' },
    ],
    [
      'its URL split over two writes',
      'process.stdout.write("serving at http://127."); setTimeout(() => console.log("0.0.1:5"), 300); setTimeout(() => {}, 60000)',
      { url: 'http://127.0.0.1:5' },
    ],
    [
      'a process that dies first: at once, with its last words',
      'console.error("no site here"); process.exit(3)',
      { error: /^the script exited \(3\) before it was ready:\nno site here\n$/ },
    ],
  ])('%s', async (_name, script, expected) => {
    const started = node(script);
    try {
      const url = await printed(started, /serving at (http:\/\/\S+)\n/).then(
        (url) => ({ url }),
        (error: Error) => ({ error: error.message }),
      );
      if ('error' in expected) expect(url).toEqual({ error: expect.stringMatching(expected.error) });
      else expect(url).toEqual(expected);
    } finally {
      await started.stop();
    }
  });

  it('one that never gets ready: stopped just before the test would time out, with its output', async () => {
    const started = node('console.log("starting..."); setTimeout(() => {}, 60000)');
    const began = Date.now();
    const error = await printed(started, /serving at (\S+)/).catch((e: Error) => e);
    const waited = Date.now() - began;
    expect({
      message: (error as Error).message,
      stopped: started.child.signalCode,
      // This test's 12 s, less the margin (5 s): about 7 s.
      waited: waited > 5_000 && waited < 12_000,
    }).toEqual({
      message: expect.stringMatching(/^the script was not ready within 7 s \(the test's timeout\):\nstarting\.\.\.\n$/),
      stopped: 'SIGTERM',
      waited: true,
    });
  }, 12_000);

  for (const [name, timeout, expected] of [
    ["a test's own timeout, less the margin", 30_000, 25_000],
    ['a long one', 600_000, 595_000],
  ] as const)
    it(`the bound: ${name}`, () => expect(Math.abs(testTimeLeft() - expected)).toBeLessThan(1000), timeout);
});

describe('in a hook', () => {
  let bound = 0;
  beforeAll(() => {
    bound = testTimeLeft();
  });
  it('a start is bounded by the configured hook timeout, less the margin', () => {
    expect(bound).toBe(inject('hookTimeout') - 5000);
  });
});
