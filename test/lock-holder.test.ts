import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isAlive } from '../src/fs/lock-holder.js';

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
