import { closeSync, fstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { brotliOptions, gzipOptions } from './compression.js';

// A writer thread: writes a site file and its precompressed siblings with synchronous calls,
// so a page costs no hop through libuv's thread pool and no work on the main thread. The bytes
// arrive in a slot of memory shared with the main thread, so nothing is allocated per page.
// Each file is created new (never written through whatever had its name) and its inode, size
// and mtime are sent back for the stat cache.

export interface WriteJob {
  readonly slot: number;
  readonly length: number;
  readonly path: string;
  readonly compress: boolean;
}

export interface WriterData {
  readonly memory: SharedArrayBuffer;
  readonly slotBytes: number;
}

const { memory, slotBytes } = workerData as WriterData;
const made = new Set<string>();

parentPort?.on('message', (job: WriteJob) => {
  try {
    const bytes = new Uint8Array(memory, job.slot * slotBytes, job.length);
    const dir = dirname(job.path);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    const stats = writeNewSync(job.path, bytes);
    if (job.compress) {
      stats.push(...writeNewSync(`${job.path}.gz`, gzipSync(bytes, gzipOptions(job.length))));
      stats.push(...writeNewSync(`${job.path}.br`, brotliCompressSync(bytes, brotliOptions(job.length))));
    }
    parentPort!.postMessage({ slot: job.slot, stats });
  } catch (error) {
    parentPort!.postMessage({ slot: job.slot, error: (error as Error).message });
  }
});

/** Creates `path` (it must not exist) holding `bytes`; returns its inode, size and mtime. */
function writeNewSync(path: string, bytes: Uint8Array): number[] {
  const fd = openSync(path, 'wx');
  try {
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
    const { ino, size, mtimeMs } = fstatSync(fd);
    return [ino, size, mtimeMs];
  } finally {
    closeSync(fd);
  }
}
