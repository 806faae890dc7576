import { describe, expect, it } from 'vitest';
import { fileSystemError } from '../src/fs/fs-error.js';
import { unsyncedError, unsyncedSwapError } from '../src/store/sync-failure.js';

// An errno is said in the same words wherever cities-api names it: a durable build's failed sync
// (store/sync-failure.ts) and any other failure of the file system (fs/fs-error.ts) read one table.

const errno = (code: string, syscall: string, path: string) =>
  Object.assign(new Error(`${code}: failed, ${syscall} '${path}'`), { code, syscall, path });

describe("a failed sync names its errno in the file system errors' words", () => {
  it.each([
    ['EIO', 'input/output error'],
    ['ENOSPC', 'no space left'],
    ['EDQUOT', 'disk quota exceeded'],
    ['EROFS', 'read-only file system'],
  ])('%s: %s', async (code, words) => {
    const other = await fileSystemError(errno(code, 'write', '/s/site/x.json'), { what: 'site directory' }, '/s/site');
    const sync = unsyncedError(errno(code, 'fdatasync', '/s/.site.staging-1/x.json'), '/s/.site.staging-1', '/s/site');
    const swap = unsyncedSwapError(errno(code, 'fsync', '/s'), '/s/site');
    // The sync's words: after "(fdatasync): " or "failed: ", up to the advice.
    const said = (message: string) => /(?:\(f\w*sync\)|failed): ([^;,]+)[;,]/.exec(message)?.[1];
    expect({
      other: (other as Error).message.includes(words),
      sync: said(sync.message),
      swap: said(swap.message),
    }).toEqual({ other: true, sync: words, swap: words });
  });
});
