import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DISK_TMPDIR } from './helpers.js';
import { type Holder, isAlive, isLiveHolder, whoHolds, whoHoldsNow } from '../src/fs/lock-holder.js';
import { lockDataset, lockSite } from '../src/fs/lock.js';
import { takeLock } from '../src/fs/lock-file.js';
import { threadId } from 'node:worker_threads';
import { dropToken, type FileId, fileState, forgetThread, newToken, tokenState } from '../src/fs/lock-tokens.js';

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
  // Identities no file here has (a device number no file system uses).
  const none = (ino: number) => ({ dev: 2 ** 31 - 7, ino });
  /** When this process started, and times around it: what a lock no holder here knows of is judged by. */
  const start = Date.now() - process.uptime() * 1000;
  const BEFORE = start - 60_000;
  const SINCE = Date.now();
  type Case = [string, () => { holder: Holder; done?: () => void }, boolean];
  /** A holder of this pid whose file a holder here took (a token for it), then `then` (drop it, or forget its thread). */
  const taken = (file: FileId, mtimeMs: number, then?: (token: string) => void) => () => {
    const token = newToken(file);
    then?.(token);
    return { holder: { pid: process.pid, file, mtimeMs }, done: () => dropToken(token) };
  };
  const ours = (file: FileId, mtimeMs: number) => () => ({ holder: { pid: process.pid, file, mtimeMs } });
  it.each<Case>([
    [
      'another live process (the parent)',
      () => ({ holder: { pid: process.ppid, file: none(5), mtimeMs: BEFORE } }),
      true,
    ],
    ['a dead process', () => ({ holder: { pid: 2 ** 22 + 1, file: none(5), mtimeMs: SINCE } }), false],
    [
      'this process, a file no holder here took, written before this process started (a dead process whose pid this one reuses)',
      ours(none(7), BEFORE),
      false,
    ],
    [
      'this process, a file no holder here took, written since this process started (a holder here with a table of its own)',
      ours(none(7), SINCE),
      true,
    ],
    [
      'this process, a file no holder here took, written a second before this process started (a coarse clock: still live)',
      ours(none(7), start - 1000),
      true,
    ],
    [
      'this process, a file a holder here has (another thread), written before it started',
      taken(none(2 ** 40 + 3), BEFORE),
      true,
    ],
    [
      'this process, a file its holder dropped (released), written since it started',
      taken(none(1), SINCE, (token) => dropToken(token)),
      true,
    ],
    [
      'this process, a file whose holder here ended holding it (forgetThread), written since it started',
      taken(none(9), SINCE, () => forgetThread(threadId)),
      false,
    ],
  ])('%s', (_, make, live) => {
    const { holder, done } = make();
    try {
      expect(isLiveHolder(holder)).toBe(live);
    } finally {
      done?.();
    }
  });

  it.each<[string, FileId]>([
    ['the same inode on another device', { dev: 3, ino: 2 ** 40 + 3 }],
    ['the same low 32 bits of the inode', none(3)],
  ])("this process, a file no holder here took, %s as one a holder here has: not that holder's", (_, file) => {
    const token = newToken(none(2 ** 40 + 3));
    try {
      expect(isLiveHolder({ pid: process.pid, file, mtimeMs: BEFORE })).toBe(false);
    } finally {
      dropToken(token);
    }
  });
});

describe('whoHolds: the pid a lock file holds (its first line), and the file (its identity, mtime and birth time)', () => {
  it.each<[string, string, number]>([
    ['a pid (as every version writes it)', '4242\n', 4242],
    ['a pid, then another line (written by the version before this one)', '4242\nab.7\n', 4242],
    ['garbage', 'not a pid\n', 0],
    ['empty', '', 0],
  ])('%s', async (name, text, pid) => {
    const file = join(tmpdir(), `.cities-lock-holder-${process.pid}-${name.split(' ')[1]}`);
    writeFileSync(file, text);
    try {
      const { dev, ino, mtimeMs, birthtimeMs } = statSync(file);
      expect(await whoHolds(file)).toEqual({ pid, file: { dev, ino }, mtimeMs, birthtimeMs });
      expect(whoHoldsNow(file)).toEqual({ pid, file: { dev, ino }, mtimeMs, birthtimeMs });
    } finally {
      rmSync(file);
    }
  });
});

describe('a lock file as older versions read it', () => {
  // cities-api before 9d27470 read a lock as `Number(text.trim()) || 0`: anything but the pid alone made it a dead holder's.
  const olderReading = (text: string) => Number(text.trim()) || 0;
  it.each([
    ['the dataset lock', (dir: string) => lockDataset(join(dir, 'cities.csv'))],
    ['the site lock', (dir: string) => lockSite(join(dir, 'dist'))],
  ])('%s holds this pid alone while held', async (_, take) => {
    const dir = mkdtempSync(join(tmpdir(), 'cities-lock-older-'));
    try {
      const release = await take(dir);
      const [lock] = readdirSync(dir).filter((name) => name.endsWith('.lock'));
      expect(olderReading(readFileSync(join(dir, lock!), 'utf8'))).toBe(process.pid);
      await release();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a lock's release removes its own lock only", () => {
  /** The lock's mtime moved by `by` ms, as touch -d does. */
  const touched = (by: number) => (lock: string) => {
    const then = new Date(statSync(lock).mtimeMs + by);
    utimesSync(lock, then, then);
    return undefined;
  };
  // A lock deleted by hand while held frees its inode, which ext4 hands straight back to the next
  // file: the next holder's lock can have the very identity the first holder recorded.
  it.each<[string, (lock: string) => (() => void) | undefined, boolean]>([
    ['as taken: removed', () => undefined, false],
    [
      "another process's lock of the same identity (inode reused): kept",
      (lock) => {
        writeFileSync(lock, `${process.ppid}\n`);
        return undefined;
      },
      true,
    ],
    [
      'deleted by hand, then taken by a holder in this process with a table of its own (on ext4 the same identity, born later): kept',
      (lock) => {
        rmSync(lock);
        // A new tick of the file system's clock: a file made by hand later is born later.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30);
        writeFileSync(lock, `${process.pid}\n`);
        return undefined;
      },
      true,
    ],
    [
      'touched by hand while held (its mtime set forward; the file and its birth time unchanged): removed',
      touched(5000),
      false,
    ],
    [
      'touched by hand while held (its mtime set back before this process started; the file and its birth time unchanged): removed',
      touched(-600_000),
      false,
    ],
    [
      'a holder in this process of the same identity (inode reused): kept',
      (lock) => {
        const { dev, ino } = statSync(lock);
        const token = newToken({ dev, ino });
        return () => dropToken(token);
      },
      true,
    ],
  ])('%s', async (_, meanwhile, kept) => {
    // On the disk's file system (ext4 here), which hands a freed inode straight back; tmpfs never does.
    const dir = mkdtempSync(join(DISK_TMPDIR, 'cities-lock-release-'));
    try {
      const lock = join(dir, '.cities.csv.lock');
      const release = await takeLock(
        lock,
        (holder) => `held by ${holder}`,
        async (error) => error,
      );
      const after = meanwhile(lock);
      await release();
      expect(existsSync(lock)).toBe(kept);
      after?.();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the holders this process knows of (lock-tokens.ts)', () => {
  const none = (ino: number) => ({ dev: 2 ** 31 - 7, ino });
  it.each<[string, () => Promise<void>]>([
    [
      "a lock whose holder here ended holding it is taken over, and that holder forgotten (the file's inode may become another's)",
      async () => {
        const dir = mkdtempSync(join(tmpdir(), 'cities-lock-forgotten-'));
        try {
          const lock = join(dir, '.cities.csv.lock');
          writeFileSync(lock, `${process.pid}\n`);
          const { dev, ino } = statSync(lock);
          const token = newToken({ dev, ino });
          forgetThread(threadId);
          expect(fileState({ dev, ino })).toBe('dead');
          const release = await takeLock(
            lock,
            (holder) => `held by ${holder}`,
            async (error) => error,
          );
          expect(fileState({ dev, ino })).toBe('unknown');
          await release();
          dropToken(token);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    ],
    [
      "a full table takes a dead holder's slot, draft writers' first (a lock holder's forgotten makes its lock look live)",
      async () => {
        const tokens: string[] = [];
        try {
          // Every slot taken: one lock holder, the rest draft writers, then all their threads ended.
          tokens.push(newToken(none(11)));
          for (;;) tokens.push(newToken());
        } catch (error) {
          expect((error as Error).message).toMatch(
            /^cannot take a lock or write a draft: this process has 1024 under way/,
          );
        }
        forgetThread(threadId);
        const drafts = tokens.slice(1);
        expect(drafts.map(tokenState).every((state) => state === 'dead')).toBe(true);
        const taken = Array.from({ length: drafts.length }, () => newToken());
        // The draft writers' slots first, then the lock holder's, then none.
        expect(fileState(none(11))).toBe('dead');
        taken.push(newToken());
        expect(fileState(none(11))).toBe('unknown');
        expect(() => newToken()).toThrow(/this process has 1024 under way/);
        // A draft writer whose slot another took: its token a dropped one's, dead all the same.
        expect(tokenState(drafts[0])).toBe('dead');
        for (const token of [...tokens, ...taken]) dropToken(token);
      },
    ],
  ])('%s', async (_, check) => check());
});
