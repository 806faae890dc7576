import { fstatSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSyncs } from '../src/fs/file-syncs.js';
import { tempDir } from './helpers.js';

// A writer thread's files synced behind its back: each closed once synced, the first failure
// thrown by settled() (with its path), and the writer held back while `limit` files wait.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-file-syncs-')));
afterAll(() => cleanup());

let n = 0;
/** A new file holding a few bytes, still open. */
function written(): { fd: number; path: string } {
  const path = join(root, `${++n}.json`);
  const fd = openSync(path, 'wx');
  writeSync(fd, Buffer.from('{"count":1}'));
  return { fd, path };
}
const isOpen = (fd: number) => {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};

describe('FileSyncs', () => {
  it.each<[string, number, () => { fd: number; path: string }[], string | undefined]>([
    ['files synced, then closed', 4, () => [written(), written(), written()], undefined],
    ['more files than the limit: all synced and closed', 1, () => [written(), written(), written()], undefined],
    [
      // A character device cannot be synced (EINVAL): what a failing disk's EIO goes through.
      'a file that cannot be synced: settled() throws its error, with its path, and it is closed all the same',
      4,
      () => [written(), { fd: openSync('/dev/null', 'r+'), path: '/dev/null' }, written()],
      '/dev/null',
    ],
  ])('%s', async (_, limit, files, failing) => {
    const syncs = new FileSyncs(limit);
    const handed = files();
    for (const { fd, path } of handed) {
      await syncs.room(1);
      syncs.add(fd, path);
    }
    const outcome = await syncs.settled().then(
      () => undefined,
      (error: NodeJS.ErrnoException) => error.path,
    );
    expect({ outcome, open: handed.filter(({ fd }) => isOpen(fd)).length }).toEqual({ outcome: failing, open: 0 });
    // A failure is thrown once: the next settled() is about what was handed over since.
    await expect(syncs.settled()).resolves.toBeUndefined();
  });

  it('room() lets in one waiter per file synced: never more than `limit` files at once', async () => {
    const syncs = new FileSyncs(1);
    const a = written();
    await syncs.room(1);
    syncs.add(a.fd, a.path);
    let second = false;
    const first = syncs.room(1);
    const other = syncs.room(1).then(() => (second = true));
    await first;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(second).toBe(false);
    syncs.release(1);
    await other;
    syncs.release(1);
    await syncs.settled();
  });

  it('room() waits while `limit` files wait for their sync', async () => {
    const syncs = new FileSyncs(2);
    const [a, b] = [written(), written()];
    await syncs.room(2);
    syncs.add(a.fd, a.path);
    syncs.add(b.fd, b.path);
    await syncs.room(1);
    // Room is made by a file synced, and closed.
    expect([a.fd, b.fd].filter(isOpen).length).toBeLessThan(2);
    syncs.release(1);
    await syncs.settled();
  });
});
