import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CompressionLevel } from '../site/spec.js';
import type { WriteJob, WriterData } from './write-worker.js';

const SLOTS_PER_WORKER = 16;
// A thread takes none of this process's flags but --cpu-prof's, so a profiled build profiles its writers too.
const PROFILING = process.execArgv.filter((flag) => flag.startsWith('--cpu-prof'));
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
// Under the tests the sources run as TypeScript; the thread always runs the compiled script.
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? '../../lib/store/write-worker.js' : './write-worker.js',
  import.meta.url,
);

interface Writer {
  readonly worker: Worker;
  readonly memory: Uint8Array;
  readonly free: number[];
  readonly done: Map<number, { resolve: (stats: number[]) => void; reject: (e: Error) => void }>;
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

  /** `level`: how the `.gz`/`.br` of pages written with them are made (null: none are). */
  constructor(level: CompressionLevel | null, size = WRITERS) {
    this.writers = Array.from({ length: size }, () => {
      const memory = new SharedArrayBuffer(SLOTS_PER_WORKER * SLOT_BYTES);
      const data: WriterData = { memory, slotBytes: SLOT_BYTES, level };
      const writer: Writer = {
        worker: new Worker(WORKER_URL, { workerData: data, execArgv: PROFILING, resourceLimits: LIMITS }),
        memory: new Uint8Array(memory),
        free: Array.from({ length: SLOTS_PER_WORKER }, (_, i) => i),
        done: new Map(),
      };
      writer.worker.on('message', ({ slot, error, stats }: { slot: number; error?: string; stats?: number[] }) => {
        const done = writer.done.get(slot)!;
        writer.done.delete(slot);
        writer.free.push(slot);
        if (error) done.reject(new Error(error));
        else done.resolve(stats!);
        this.slotFreed.shift()?.();
      });
      writer.worker.on('error', (error) => {
        this.failure ??= error;
        for (const { reject } of writer.done.values()) reject(error);
        for (const wake of this.slotFreed.splice(0)) wake();
      });
      return writer;
    });
  }

  /**
   * Creates `path` holding `bytes` (and `.gz`/`.br` beside it when `compress`); resolves with the
   * inode, size and mtime of each file written, in that order. False when too large for a slot.
   */
  write(path: string, bytes: Uint8Array, compress: boolean): false | Promise<number[]> {
    if (bytes.length > SLOT_BYTES) return false;
    return this.enqueue(path, bytes, compress);
  }

  async close(): Promise<void> {
    await Promise.all(this.writers.map(({ worker }) => worker.terminate()));
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
    return new Promise<number[]>((resolve, reject) => {
      writer.done.set(slot, { resolve, reject });
      writer.worker.postMessage(job);
    });
  }

  private freest(): Writer {
    return this.writers.reduce((a, b) => (b.free.length > a.free.length ? b : a));
  }
}
