import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Holder, isAlive, isLiveHolder, whoHolds } from '../src/fs/lock-holder.js';
import { dropToken, newToken } from '../src/fs/lock-tokens.js';

const linux = process.platform === 'linux';
// A thread of this process (V8's and libuv's are there from the start), as Linux lists them.
const thread = linux
  ? readdirSync('/proc/self/task')
      .map(Number)
      .find((id) => id !== process.pid)
  : undefined;

describe('isAlive: whether a lock file names a live process', () => {
  it.each([
    ['this process', process.pid, true],
    ['0 (an unreadable lock)', 0, false],
    ['a negative number (a process group)', -process.pid, false],
    ['a pid past any Linux pid_max (no such process)', 2 ** 22 + 1, false],
    ['not a whole number', 1.5, false],
  ])('%s', (_, pid, alive) => {
    expect(isAlive(pid)).toBe(alive);
  });

  it.skipIf(!linux)('a thread of a live process is not a process (its Tgid is another id)', () => {
    expect(thread).toBeDefined();
    expect(isAlive(thread!)).toBe(false);
  });
});

describe('isLiveHolder: whether a lock file names a live holder other than the caller', () => {
  const dropped = newToken();
  dropToken(dropped);
  const held = newToken();
  it.each<[string, Holder, boolean]>([
    ['another live process (the parent)', { pid: process.ppid, token: undefined }, true],
    ['a dead process', { pid: 2 ** 22 + 1, token: 'x.1' }, false],
    [
      'this process, no token (written by hand, or a dead process whose pid this one reuses)',
      { pid: process.pid, token: undefined },
      false,
    ],
    ['this process, a token another process gave (its pid reused)', { pid: process.pid, token: 'zzzzzzzz.1' }, false],
    ['this process, a token a holder here has (another thread)', { pid: process.pid, token: held }, true],
    ['this process, a token its holder dropped (released)', { pid: process.pid, token: dropped }, false],
  ])('%s', (_, holder, live) => {
    expect(isLiveHolder(holder)).toBe(live);
  });
  afterAll(() => dropToken(held));
});

describe('whoHolds: the pid and the token a lock file holds', () => {
  it.each<[string, string, Holder]>([
    ['pid and token', '4242\nab.7\n', { pid: 4242, token: 'ab.7' }],
    ['a pid alone (a lock written by hand, or by an older version)', '4242\n', { pid: 4242, token: undefined }],
    ['garbage', 'not a pid\n', { pid: 0, token: undefined }],
    ['empty', '', { pid: 0, token: undefined }],
  ])('%s', async (name, text, holder) => {
    const file = join(tmpdir(), `.cities-lock-holder-${process.pid}-${name.split(' ')[0]}`);
    writeFileSync(file, text);
    try {
      expect(await whoHolds(file)).toEqual(holder);
    } finally {
      rmSync(file);
    }
  });
});
