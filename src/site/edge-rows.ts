import type { Bytes } from '../core/bytes.js';
import { checkHead, decodeBlock, HEADER_BYTES, MixedBuilds, type BlockFile } from './edge-format.js';
import { blockEnds, headBytes, RangeIgnored, readByRanges, type ReadRange } from './edge-ranges.js';
import { ByteLru } from './byte-lru.js';
import { BytePool, type Into } from './byte-pool.js';
import { neededOf, runsOf, type LayoutBlocks } from './edge-runs.js';

// The cities at given indices of a layout (edge-files.ts), read block by block in the order the
// page needs them: a few blocks read ahead at once, each block's run of the page's cities handed
// on as views as soon as it arrives, and recently read blocks kept up to a byte budget for later
// requests. A request holds its read-ahead blocks, never its whole page. Where files can be read
// by range, a block of which the page needs under a third of the cities is read by range
// (edge-ranges.ts): its head, kept for later requests, then the needed cities. A page spanning
// many blocks (a scan: every city, or a large page) reads its blocks for itself, into arrays it
// gives back once their cities are sent: neither kept for later requests (a scan would only push
// out of the cache what smaller pages read again) nor allocated afresh per block.

/** A file held open: what it held when opened, even once replaced or deleted (a rebuild of a self-hosted site). */
export interface OpenedFile {
  /** Its bytes [start, end) (fewer at its end). */
  range(start: number, end: number): Promise<Uint8Array>;
  /** All of it (into an array `into` gives, where given). */
  read(into?: Into): Promise<Uint8Array>;
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
  /** Reads part of a site file: blocks of which a page needs few cities are read by range. */
  readonly readRange?: ReadRange;
  /** Bytes of block heads (4 a city) kept for ranged reads (default 4 MB). */
  readonly headBytes?: number;
  /** Where files are held open: the most a page opens before its first byte (default 16); the rest are opened as it is read. */
  readonly holdFiles?: number;
  /** A page spanning more blocks than this (default 16, ~4 MB) reads them for itself into reused arrays, kept by no cache. */
  readonly scanBlocks?: number;
}

/** Slack a request's ranged reads may spend beyond 3 x their cities' bytes, and each block's share. */
const RANGE_SLACK = 256_000;
const BLOCK_SLACK = 32_000;

export class RowReader {
  private readonly cache: ByteLru<BlockFile>;
  /** Block heads (city ends) read for ranged reads. */
  private readonly heads: ByteLru<Uint32Array>;
  private readonly inFlight = new Map<string, Promise<BlockFile>>();
  private readonly concurrency: number;
  private readonly keepBlocks: number;
  private readonly holdFiles: number;
  private readonly scanBlocks: number;
  /** Arrays the blocks of scans are read into, given back as their cities are sent. */
  private readonly pool: BytePool;
  private readRange: ReadRange | undefined;

  constructor(
    private readonly read: (path: string, into?: Into) => Promise<Uint8Array>,
    private readonly tag: Uint8Array,
    options: RowOptions,
    /** Where files can be held open: a page's blocks are all opened (and their tags checked) before its first city is read. */
    private readonly open?: OpenSiteFile,
  ) {
    this.cache = new ByteLru(options.cacheBytes ?? 16_000_000);
    this.heads = new ByteLru(options.headBytes ?? 4_000_000);
    this.concurrency = Math.max(1, options.concurrency ?? 6);
    this.keepBlocks = Math.max(0, options.keepBlocks ?? 16);
    this.holdFiles = Math.max(1, options.holdFiles ?? 16);
    this.scanBlocks = Math.max(0, options.scanBlocks ?? 16);
    this.pool = new BytePool(this.concurrency + 2);
    this.readRange = options.readRange;
  }

  /**
   * The serialized cities at these indices of a layout, in the indices' order, as one batch of
   * views per run of consecutive indices in one block. A request holds at most `concurrency`
   * blocks being read and `keepBlocks` used ones that a later run of the page needs again. A
   * batch's views are valid until the next batch is asked for: a scan's arrays are then reused.
   */
  async *cities(layout: LayoutBlocks, indices: ArrayLike<number>): AsyncGenerator<Bytes[]> {
    const { starts, path } = layout;
    const runs = runsOf(starts, indices);
    const blocks = runs.blocks;
    const needed = neededOf(runs, starts, indices);
    let slack = RANGE_SLACK;
    const pending = new Map<number, Promise<BlockFile>>();
    const uses = new Map<number, number>();
    // Blocks this request has used and will use again, the most recent last: read again only once
    // out of it. A block no later run needs is let go at once: a page of every city holds its
    // read-ahead, not 16 blocks more.
    const used = new Map<number, Promise<BlockFile>>();
    const lastRun = new Map<number, number>();
    blocks.forEach((b, r) => lastRun.set(b, r));
    let ahead = 0;
    const held = new Map<string, OpenedFile>();
    // A scan's blocks read into the pool's arrays, by block; those let go, given back once the batch that used them is sent.
    const scan = new Set(blocks).size > this.scanBlocks;
    const arrays = new Map<number, Uint8Array>();
    const letGo: Uint8Array[] = [];
    const release = (b: number) => {
      const bytes = arrays.get(b);
      if (bytes && this.pool.owns(bytes)) letGo.push(bytes);
      arrays.delete(b);
    };
    // Files held open: the page's first `holdFiles` before its first byte (a rebuild meanwhile
    // cannot cut a page of that many blocks), the others as its reads reach them, each closed
    // after its last run: a page of every city held all ~300 of its files at 140k cities, and
    // four at once took a 1,024-descriptor process to EMFILE.
    const later = new Set<string>();
    try {
      if (this.open) {
        const first = [...new Set(blocks.map(path))].filter((p) => !this.cache.has(p));
        for (const p of first.splice(this.holdFiles)) later.add(p);
        await this.hold(first, held);
      }
      for (let r = 0; r < blocks.length; r++) {
        // Start the reads of the next runs' blocks, up to `concurrency` blocks held at once.
        while (ahead < blocks.length && (ahead <= r || pending.size < this.concurrency)) {
          const b = blocks[ahead++]!;
          if (!pending.has(b)) {
            const kept = used.get(b);
            used.delete(b);
            const few = needed.get(b)!;
            const cities = (starts[b + 1] ?? layout.count) - starts[b]!;
            const start = (file: OpenedFile | undefined) => {
              const { readRange } = this;
              const range = file
                ? file.range.bind(file)
                : readRange && ((s: number, e: number) => readRange(path(b), s, e));
              if (!range || 3 * few.length >= cities || this.cache.has(path(b)))
                return scan ? this.scanned(path(b), file, (bytes) => arrays.set(b, bytes)) : this.block(path(b), file);
              const share = Math.min(slack, BLOCK_SLACK);
              slack -= share;
              return this.ranged(path(b), cities, few, share, range);
            };
            if (kept) pending.set(b, kept);
            else if (later.delete(path(b)))
              pending.set(
                b,
                this.hold([path(b)], held).then(() => start(held.get(path(b)))),
              );
            else pending.set(b, start(held.get(path(b))));
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
          if (lastRun.get(b)! > r) used.set(b, pending.get(b)!);
          else {
            held.get(path(b))?.close();
            held.delete(path(b));
            release(b);
          }
          pending.delete(b);
          if (used.size > this.keepBlocks) {
            const oldest = used.keys().next().value!;
            used.delete(oldest);
            release(oldest);
          }
        }
        yield batch;
        // The batch is sent (its views copied or written): the arrays of the blocks let go are free.
        for (const bytes of letGo.splice(0)) this.pool.give(bytes);
      }
    } finally {
      for (const reading of pending.values()) reading.catch(() => undefined);
      for (const file of held.values()) file.close();
    }
  }

  /** Opens these blocks, each checked to be of this build: the page is then read from these, whatever replaces them. */
  private async hold(paths: readonly string[], held: Map<string, OpenedFile>): Promise<void> {
    const open = this.open!;
    const opened = await Promise.allSettled(
      paths.map(async (path) => {
        const file = await open(path);
        held.set(path, file);
        checkHead(await file.range(0, HEADER_BYTES), this.tag, path);
      }),
    );
    // Every open settled first, so that the caller closes all of them.
    for (const result of opened) if (result.status === 'rejected') throw result.reason;
  }

  /** The cities at `needed` of a block of `cities`, read by range: its head first unless kept. */
  private async ranged(
    path: string,
    cities: number,
    needed: readonly number[],
    slack: number,
    read: (start: number, end: number) => Promise<Uint8Array>,
  ): Promise<BlockFile> {
    try {
      let ends = this.heads.get(path);
      if (!ends) {
        ends = blockEnds(await read(0, headBytes(cities)), cities, this.tag, path);
        this.heads.set(path, ends, ends.byteLength);
      }
      return await readByRanges(read, path, needed, slack, ends, this.concurrency);
    } catch (error) {
      if (!(error instanceof RangeIgnored)) throw error;
      // The platform sends whole files (wrangler dev's assets): this block is the file sent, and no more ranges are asked.
      this.readRange = undefined;
      const block = decodeBlock(error.file, this.tag, path);
      this.cache.set(path, block, error.file.byteLength);
      return block;
    }
  }

  /** A block read for a scan: from the cache if there, else into an array of the pool (told to `read`), not cached. */
  private async scanned(
    path: string,
    file: OpenedFile | undefined,
    read: (bytes: Uint8Array) => void,
  ): Promise<BlockFile> {
    const hit = this.cache.get(path);
    if (hit) return hit;
    const bytes = await (file ? file.read(this.pool.take) : this.read(path, this.pool.take));
    read(bytes);
    return decodeBlock(bytes, this.tag, path);
  }

  private block(path: string, file?: OpenedFile): Promise<BlockFile> {
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
