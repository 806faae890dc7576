import type { Bytes } from '../core/bytes.js';
import { checkHead, decodeBlock, HEADER_BYTES, MixedBuilds, type BlockFile } from './edge-format.js';

// The cities at given indices of a layout (edge-files.ts), read block by block in the order the
// page needs them: a few blocks read ahead at once, each block's run of the page's cities handed
// on as views as soon as it arrives, and recently read blocks kept up to a byte budget for later
// requests. A request holds its read-ahead blocks, never its whole page.

/** A file held open: what it held when opened, even once replaced or deleted (a rebuild of a self-hosted site). */
export interface OpenedFile {
  /** Its first `bytes` bytes. */
  head(bytes: number): Promise<Uint8Array>;
  /** All of it. */
  read(): Promise<Uint8Array>;
  close(): void;
}

/** Opens a site file by its path relative to the site's root. */
export type OpenSiteFile = (path: string) => Promise<OpenedFile>;

export interface RowOptions {
  /** Bytes of blocks kept for later requests (default 16 MB; 0 keeps none). */
  readonly cacheBytes?: number;
  /** Blocks read at once (default 6, the simultaneous connections a Cloudflare Worker may open). */
  readonly concurrency?: number;
  /**
   * Blocks a request keeps once it has used them, for its own later runs (default 16, about 4 MB):
   * a multi-field page whose cities alternate between a few blocks reads each once, whatever the cache.
   */
  readonly keepBlocks?: number;
}

/** A layout's blocks: the first index of each, and each one's path. */
export interface LayoutBlocks {
  readonly starts: readonly number[];
  readonly path: (block: number) => string;
}

export class RowReader {
  private readonly cache = new Map<string, { block: BlockFile; bytes: number }>();
  private readonly inFlight = new Map<string, Promise<BlockFile>>();
  private cached = 0;
  private readonly budget: number;
  private readonly concurrency: number;
  private readonly keepBlocks: number;

  constructor(
    private readonly read: (path: string) => Promise<Uint8Array>,
    private readonly tag: Uint8Array,
    options: RowOptions,
    /** Where files can be held open: a page's blocks are all opened (and their tags checked) before its first city is read. */
    private readonly open?: OpenSiteFile,
  ) {
    this.budget = options.cacheBytes ?? 16_000_000;
    this.concurrency = Math.max(1, options.concurrency ?? 6);
    this.keepBlocks = Math.max(0, options.keepBlocks ?? 16);
  }

  /**
   * The serialized cities at these indices of a layout, in the indices' order, as one batch of
   * views per run of consecutive indices in one block. A request holds at most `concurrency`
   * blocks being read and `keepBlocks` used ones.
   */
  async *cities({ starts, path }: LayoutBlocks, indices: ArrayLike<number>): AsyncGenerator<Bytes[]> {
    const runs = runsOf(starts, indices);
    const blocks = runs.blocks;
    const pending = new Map<number, Promise<BlockFile>>();
    const uses = new Map<number, number>();
    // Blocks this request has used, the most recent last: read again only once out of it.
    const used = new Map<number, Promise<BlockFile>>();
    let ahead = 0;
    const held = new Map<string, OpenedFile>();
    try {
      if (this.open) await this.hold(blocks.map(path), held);
      for (let r = 0; r < blocks.length; r++) {
        // Start the reads of the next runs' blocks, up to `concurrency` blocks held at once.
        while (ahead < blocks.length && (ahead <= r || pending.size < this.concurrency)) {
          const b = blocks[ahead++]!;
          if (!pending.has(b)) {
            const kept = used.get(b);
            used.delete(b);
            pending.set(b, kept ?? this.block(path(b), held.get(path(b))));
          }
          uses.set(b, (uses.get(b) ?? 0) + 1);
        }
        const b = blocks[r]!;
        const block = await pending.get(b)!;
        const batch: Bytes[] = [];
        for (let i = runs.from[r]!; i < runs.from[r + 1]!; i++) {
          const at = indices[i]! - starts[b]!;
          if (at >= block.count)
            throw new MixedBuilds(
              `${path(b)} holds ${block.count} cities, not city ${at + 1}: deploy the site's files of one build together`,
            );
          batch.push(block.city(at));
        }
        const left = uses.get(b)! - 1;
        if (left) uses.set(b, left);
        else {
          uses.delete(b);
          used.set(b, pending.get(b)!);
          pending.delete(b);
          if (used.size > this.keepBlocks) used.delete(used.keys().next().value!);
        }
        yield batch;
      }
    } finally {
      for (const reading of pending.values()) reading.catch(() => undefined);
      for (const file of held.values()) file.close();
    }
  }

  /** Opens the blocks not in memory, each checked to be of this build: the page is then read from these, whatever replaces them. */
  private async hold(paths: readonly string[], held: Map<string, OpenedFile>): Promise<void> {
    const open = this.open!;
    const opened = await Promise.allSettled(
      [...new Set(paths)]
        .filter((path) => !this.cache.has(path))
        .map(async (path) => {
          const file = await open(path);
          held.set(path, file);
          checkHead(await file.head(HEADER_BYTES), this.tag, path);
        }),
    );
    // Every open settled first, so that the caller closes all of them.
    for (const result of opened) if (result.status === 'rejected') throw result.reason;
  }

  private block(path: string, file?: OpenedFile): Promise<BlockFile> {
    const hit = this.cache.get(path);
    if (hit) {
      this.cache.delete(path);
      this.cache.set(path, hit);
      return Promise.resolve(hit.block);
    }
    let reading = file ? undefined : this.inFlight.get(path);
    if (!reading) {
      reading = (file ? file.read() : this.read(path)).then((bytes) => {
        const block = decodeBlock(bytes, this.tag, path);
        this.keep(path, block, bytes.byteLength);
        return block;
      });
      if (!file) {
        this.inFlight.set(path, reading);
        reading.finally(() => this.inFlight.delete(path)).catch(() => undefined);
      }
    }
    return reading;
  }

  private keep(path: string, block: BlockFile, bytes: number): void {
    if (bytes > this.budget) return;
    this.cache.set(path, { block, bytes });
    this.cached += bytes;
    for (const [old, entry] of this.cache) {
      if (this.cached <= this.budget) break;
      this.cache.delete(old);
      this.cached -= entry.bytes;
    }
  }
}

/** The indices cut into runs in one block each: run r is indices from[r]..from[r+1]-1, in block blocks[r]. */
function runsOf(starts: readonly number[], indices: ArrayLike<number>): { blocks: number[]; from: number[] } {
  const blocks: number[] = [];
  const from: number[] = [];
  let block = -1;
  for (let i = 0; i < indices.length; i++) {
    const x = indices[i]!;
    if (block >= 0 && x >= starts[block]! && (block + 1 >= starts.length || x < starts[block + 1]!)) continue;
    block = blockOf(starts, x);
    blocks.push(block);
    from.push(i);
  }
  from.push(indices.length);
  return { blocks, from };
}

/** How many distinct blocks hold these indices of a layout. */
export function blockCount(starts: readonly number[], indices: ArrayLike<number>): number {
  const seen = new Set<number>();
  for (const block of runsOf(starts, indices).blocks) seen.add(block);
  return seen.size;
}

/** The block holding index `x`: the last whose start is at most x. */
function blockOf(starts: readonly number[], x: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
