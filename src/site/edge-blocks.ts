import { checkHead, decodeBlock, HEADER_BYTES, MixedBuilds, type BlockFile } from './edge-format.js';
import { blockEnds, headBytes, RangeIgnored, readByRanges, type ReadRange } from './edge-ranges.js';
import { ByteLru } from './byte-lru.js';
import type { Needed } from './edge-runs.js';
import { BytePool, type Into } from './byte-pool.js';

// How one block of a layout (edge-files.ts) is read for a page (edge-rows.ts): whole, kept for
// later requests up to a byte budget and read once however many requests wait for it; by ranges,
// its head kept (edge-ranges.ts); for a scan, into an array of a small pool, kept by no cache; or
// from a file the page holds open, its tag checked first.

/** A file held open: what it held when opened, even once replaced or deleted (a rebuild of a self-hosted site). */
export interface OpenedFile {
  /** Its bytes [start, end) (fewer at its end). */
  range(start: number, end: number): Promise<Uint8Array>;
  /** All of it (into an array `into` gives, where given). */
  read(into?: Into): Promise<Uint8Array>;
  close(): void;
}

/** Opens a site file by its path relative to the site's root (`signal`: aborted when the open is given up). */
export type OpenSiteFile = (path: string, signal?: AbortSignal) => Promise<OpenedFile>;

export interface BlockOptions {
  /** Bytes of blocks kept for later requests (default 16 MB; 0 keeps none). */
  readonly cacheBytes?: number;
  /** Reads part of a site file: blocks of which a page needs few cities are read by range. */
  readonly readRange?: ReadRange;
  /** Bytes of block heads (4 a city) kept for ranged reads (default 4 MB). */
  readonly headBytes?: number;
}

/**
 * Checks that a block read from `path` holds a run of a page, the cities at indices[from..to) less
 * `first` (the block's first index): a block holding fewer is of another build than the index.
 */
export function checkRun(
  block: BlockFile,
  run: { indices: ArrayLike<number>; from: number; to: number; first: number },
  path: string,
): void {
  let most = 0;
  for (let i = run.from; i < run.to; i++) most = Math.max(most, run.indices[i]! - run.first);
  if (most >= block.count)
    throw new MixedBuilds(
      `${path} holds ${block.count} cities, not city ${most + 1}: deploy the site's files of one build together`,
    );
}

/** A block read for a scan that fills at most 1/SMALL of its pool array is copied out of it. */
const SMALL = 4;

export class BlockReads {
  readonly cache: ByteLru<BlockFile>;
  /** Block heads (city ends) read for ranged reads. */
  readonly heads: ByteLru<Uint32Array>;
  private readonly inFlight = new Map<string, Promise<BlockFile>>();
  /** Arrays the blocks of scans are read into, given back as their cities are sent. */
  readonly pool: BytePool;
  /** Unset once the platform is seen to send whole files for ranges. */
  readRange: ReadRange | undefined;

  constructor(
    private readonly read: (path: string, into?: Into) => Promise<Uint8Array>,
    private readonly tag: Uint8Array,
    /** Blocks read at once, and ranges of one block read at once. */
    private readonly concurrency: number,
    options: BlockOptions,
    private readonly open?: OpenSiteFile,
  ) {
    this.cache = new ByteLru(options.cacheBytes ?? 16_000_000);
    this.heads = new ByteLru(options.headBytes ?? 4_000_000);
    this.pool = new BytePool(concurrency + 2);
    this.readRange = options.readRange;
  }

  /**
   * Opens these blocks, each checked to be of this build: the page is then read from these, whatever
   * replaces them. Each open and its head's read take one of the page's turns (`turn`: its Slots).
   */
  async hold(
    paths: readonly string[],
    held: Map<string, OpenedFile>,
    turn: <T>(work: () => Promise<T>) => Promise<T>,
  ): Promise<void> {
    const open = this.open!;
    const opened = await Promise.allSettled(
      paths.map((path) =>
        turn(async () => {
          const file = await open(path);
          held.set(path, file);
          checkHead(await file.range(0, HEADER_BYTES), this.tag, path);
        }),
      ),
    );
    // Every open settled first, so that the caller closes all of them.
    for (const result of opened) if (result.status === 'rejected') throw result.reason;
  }

  /** The cities at `needed` of a block of `cities`, read by range: its head first unless kept. */
  async ranged(
    path: string,
    cities: number,
    needed: Needed,
    slack: number,
    read: (start: number, end: number) => Promise<Uint8Array>,
  ): Promise<BlockFile> {
    try {
      return await readByRanges(read, path, needed, slack, await this.ends(path, cities, read), this.concurrency);
    } catch (error) {
      if (!(error instanceof RangeIgnored)) throw error;
      return this.ignored(path, error);
    }
  }

  /**
   * A block's city ends (its head, kept), read by range unless kept. Where the platform sent the
   * whole file instead, ranges are asked no more (readRange unset) and the ends are the file's.
   */
  async head(
    path: string,
    cities: number,
    read: (start: number, end: number) => Promise<Uint8Array>,
  ): Promise<Uint32Array> {
    try {
      return await this.ends(path, cities, read);
    } catch (error) {
      if (!(error instanceof RangeIgnored)) throw error;
      this.ignored(path, error);
      return blockEnds(error.file, cities, this.tag, path).slice();
    }
  }

  /** A block's city ends, kept or read by range (rejects with RangeIgnored where the platform sent the whole file). */
  private async ends(
    path: string,
    cities: number,
    read: (start: number, end: number) => Promise<Uint8Array>,
  ): Promise<Uint32Array> {
    let ends = this.heads.get(path);
    if (!ends) {
      // A copy: kept, it must view no array a read may reuse.
      ends = blockEnds(await read(0, headBytes(cities)), cities, this.tag, path).slice();
      this.heads.set(path, ends, ends.byteLength);
    }
    return ends;
  }

  /** The platform sends whole files (wrangler dev's assets): this block is the file sent, and no more ranges are asked. */
  private ignored(path: string, { file }: RangeIgnored): BlockFile {
    this.readRange = undefined;
    const block = decodeBlock(file, this.tag, path);
    this.cache.set(path, block, file.byteLength);
    return block;
  }

  /** A block read for a scan: from the cache if there, else into an array of the pool (or `into`'s; told to `read`), not cached. */
  async scanned(
    path: string,
    file: OpenedFile | undefined,
    read: (bytes: Uint8Array) => void,
    into: Into = this.pool.take,
  ): Promise<BlockFile> {
    const hit = this.cache.get(path);
    if (hit) return hit;
    // A BYOB read may hand the pool's memory back in a new ArrayBuffer: the pool adopts it (an arena's is not the pool's).
    let taken: Uint8Array | undefined;
    const take = (size: number) => (taken = into(size));
    let bytes = await (file ? file.read(take) : this.read(path, take));
    if (taken) this.pool.adopt(taken, bytes);
    if (this.pool.owns(bytes) && SMALL * bytes.length <= bytes.buffer.byteLength) {
      // A small block (a tie group's fine block, ~4 KB) copied out and its array given back: kept
      // in a pool array, it held 16 times its bytes, and a page scattered over fine blocks, kept
      // by memory, kept a few, re-reading a block per city or two (16,355 reads for a page of 20,978).
      const own = bytes.slice();
      this.pool.give(bytes);
      bytes = own;
    }
    read(bytes);
    return decodeBlock(bytes, this.tag, path);
  }

  block(path: string, file?: OpenedFile): Promise<BlockFile> {
    const hit = this.cache.get(path);
    if (hit) return Promise.resolve(hit);
    let reading = file ? undefined : this.inFlight.get(path);
    if (!reading) {
      reading = (file ? file.read() : this.read(path)).then((bytes) => {
        const block = decodeBlock(bytes, this.tag, path);
        this.cache.set(path, block, bytes.byteLength);
        return block;
      });
      if (!file) {
        this.inFlight.set(path, reading);
        reading.finally(() => this.inFlight.delete(path)).catch(() => undefined);
      }
    }
    return reading;
  }
}
