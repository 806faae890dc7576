import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { brotliOptions, gzipOptions } from './compression.js';

// A writer thread: writes a site file and its precompressed siblings with synchronous calls,
// so a page costs no hop through libuv's thread pool and no work on the main thread. The bytes
// arrive in a slot of memory shared with the main thread, so nothing is allocated per page.

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
    writeFileSync(job.path, bytes);
    if (job.compress) {
      writeFileSync(`${job.path}.gz`, gzipSync(bytes, gzipOptions(job.length)));
      writeFileSync(`${job.path}.br`, brotliCompressSync(bytes, brotliOptions(job.length)));
    }
    parentPort!.postMessage({ slot: job.slot });
  } catch (error) {
    parentPort!.postMessage({ slot: job.slot, error: (error as Error).message });
  }
});
