import { availableParallelism } from 'node:os';
import { startThread, type WorkerChannel } from '../proc/workers.js';
import type { CompressionLevel } from '../site/spec.js';
import type { WriteJob, WriterProtocol } from './write-worker.js';

const SLOTS_PER_WORKER = 16;
const SLOT_BYTES = 128 * 1024;
// A writer allocates little on its heap (the pages arrive in shared memory, zlib's output is
// off-heap), but each page's gzip and brotli leave buffers (and a stream object) that only a
// scavenge frees: the smaller the young generation, the fewer wait. 2 MB instead of 4 cut the
// 140k build's peak RSS by about 40 MB (two writers), at no measurable cost in time.
const LIMITS = { maxYoungGenerationSizeMb: 2 };
// A writer per core: compressing is most of a build's CPU. One writer fewer was tried for memory
// (each writer's zlib and brotli states fragment a malloc arena of their own): at 140,000 cities
// on 2 cores the build took 101 s instead of 58 s and its peak RSS did not fall (307 vs 278 MB).
const WRITERS = Math.max(1, availableParallelism());
// Files written and waiting for their sync (durable builds), all writers together: each is an
// open file, and libuv's thread pool syncs 4 at a time. Measured with 2 writers of 64 each.
const SYNCING = 128;

interface Writer {
  readonly thread: WorkerChannel<WriterProtocol>;
  readonly memory: Uint8Array;
  readonly free: number[];
}

/**
 * Writer threads, each with a few slots of memory shared with this thread: a page is copied into
 * a free slot and written (with its compressed siblings) by the thread, so no buffer is allocated
 * or handed between threads per page and memory stays flat. Pages larger than a slot are not
 * taken (write() returns false).
 */
export class WritePool {
  private readonly writers: Writer[];
  private readonly slotFreed: (() => void)[] = [];
  private failure: Error | undefined;
  private closed = false;

  /** `level`: how the `.gz`/`.br` of pages written with them are made (null: none are); `sync`: whether each file is synced to disk (settle()). */
  constructor(level: CompressionLevel | null, sync: boolean, size = WRITERS) {
    this.writers = Array.from({ length: size }, () => {
      const memory = new SharedArrayBuffer(SLOTS_PER_WORKER * SLOT_BYTES);
      const thread = startThread<WriterProtocol>('store/write-worker', {
        name: 'a writer thread',
        data: { memory, slotBytes: SLOT_BYTES, level, syncing: sync ? Math.max(4, Math.floor(SYNCING / size)) : 0 },
        resourceLimits: LIMITS,
      });
      // A writer that ends (out of memory, crashed) fails its jobs waiting, and every job after them.
      void thread.ended.then((ended) => {
        if (!this.closed) this.failure ??= ended;
        for (const wake of this.slotFreed.splice(0)) wake();
      });
      return { thread, memory: new Uint8Array(memory), free: Array.from({ length: SLOTS_PER_WORKER }, (_, i) => i) };
    });
  }

  /**
   * Creates `path` holding `bytes` (and `.gz`/`.br` beside it when `compress`); resolves with the
   * inode, size and mtime of each file written, in that order (synced later, if at all: settle()). False
   * when too large for a slot.
   */
  write(path: string, bytes: Uint8Array, compress: boolean): false | Promise<number[]> {
    if (bytes.length > SLOT_BYTES) return false;
    return this.enqueue(path, bytes, compress);
  }

  /** Resolves once every file written is on disk (fdatasync), or rejects with the first that could not be synced. */
  async settle(): Promise<void> {
    if (this.failure) throw this.failure;
    await Promise.all(this.writers.map(({ thread }) => thread.call('settle', undefined)));
  }

  /** Stops the threads, once the files they still sync are closed (else their descriptors would stay open in this process). */
  async close(): Promise<void> {
    await Promise.allSettled(this.writers.map(({ thread }) => thread.call('settle', undefined)));
    this.closed = true;
    await Promise.all(this.writers.map(({ thread }) => thread.stop()));
  }

  private async enqueue(path: string, bytes: Uint8Array, compress: boolean): Promise<number[]> {
    let writer = this.freest();
    while (!writer.free.length && !this.failure) {
      await new Promise<void>((resolve) => this.slotFreed.push(resolve));
      writer = this.freest();
    }
    if (this.failure) throw this.failure;
    const slot = writer.free.pop()!;
    writer.memory.set(bytes, slot * SLOT_BYTES);
    const job: WriteJob = { slot, length: bytes.length, path, compress };
    try {
      return await writer.thread.call('write', job);
    } finally {
      writer.free.push(slot);
      this.slotFreed.shift()?.();
    }
  }

  private freest(): Writer {
    return this.writers.reduce((a, b) => (b.free.length > a.free.length ? b : a));
  }
}
