import { closeSync, fstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { FileSyncs } from '../fs/file-syncs.js';
import type { Silent } from '../proc/channel.js';
import { parentChannel } from '../proc/workers.js';
import type { CompressionLevel } from '../site/spec.js';
import { compressPage } from './compression.js';

// A writer thread: writes a site file and its precompressed siblings with synchronous calls,
// so a page costs no hop through libuv's thread pool and no work on the main thread. The bytes
// arrive in a slot of memory shared with the main thread, so nothing is allocated per page.
// Each file is created new (never written through whatever had its name) and its inode, size
// and mtime are sent back for the stat cache. In a durable build each is then fdatasynced in the
// background (the next pages are written meanwhile): `settle` waits for them, before the swap.

export interface WriteJob {
  readonly slot: number;
  readonly length: number;
  readonly path: string;
  readonly compress: boolean;
}

export interface WriterData {
  readonly memory: SharedArrayBuffer;
  readonly slotBytes: number;
  /** How the `.gz`/`.br` of jobs that ask for them are made (null: none are). */
  readonly level: CompressionLevel | null;
  /** How many files may wait for their sync to disk (fdatasync) at once; 0: none is synced. */
  readonly syncing: number;
}

/** write-pool.ts and a writer thread: a job in, the inode, size and mtime of each file written out. */
export interface WriterProtocol {
  readonly data: WriterData;
  readonly parent: Silent;
  readonly worker: {
    readonly calls: { write(job: WriteJob): number[]; settle(): void };
    readonly events: Record<never, never>;
  };
}

const parent = parentChannel<WriterProtocol>();
const { memory, slotBytes, level, syncing } = parent.data;
const made = new Set<string>();
// Files written, not yet synced, each an open file: at most `syncing` (one job's, if more).
const syncs = new FileSyncs(syncing);
// Files of the job being written handed to `syncs` (a job runs whole once it has room).
let handed = 0;

parent.handle('write', async (job) => {
  const files = job.compress && level ? 3 : 1;
  if (syncing) await syncs.room(files);
  handed = 0;
  try {
    const bytes = new Uint8Array(memory, job.slot * slotBytes, job.length);
    const dir = dirname(job.path);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    const stats = writeNewSync(job.path, bytes);
    if (job.compress && level) {
      const [gz, br] = compressPage(bytes, level);
      stats.push(...writeNewSync(`${job.path}.gz`, gz), ...writeNewSync(`${job.path}.br`, br));
    }
    return stats;
  } finally {
    if (syncing) syncs.release(files - handed);
  }
});

parent.handle('settle', () => syncs.settled());

/** Creates `path` (it must not exist) holding `bytes`, closed (synced first, behind, if `syncing`); returns its inode, size, mtime and ctime. */
function writeNewSync(path: string, bytes: Uint8Array): number[] {
  const fd = openSync(path, 'wx');
  let kept = false;
  try {
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
    const { ino, size, mtimeMs, ctimeMs } = fstatSync(fd);
    if (syncing) {
      syncs.add(fd, path);
      handed++;
      kept = true;
    }
    return [ino, size, mtimeMs, ctimeMs];
  } finally {
    if (!kept) closeSync(fd);
  }
}
