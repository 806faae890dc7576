import type { CityBatch } from '../core/envelope-stream.js';
import type { Into } from './byte-pool.js';
import { BlockReads, type BlockOptions, type OpenSiteFile } from './edge-blocks.js';
import { gathered } from './edge-gather.js';
import { IndexPool } from './index-pool.js';
import { PageReads, type PageReadLimits } from './edge-page-reads.js';
import type { LayoutBlocks, Runs } from './edge-runs.js';
import { Slots } from './edge-turns.js';

// The cities at given indices of a layout (edge-files.ts), read block by block in the order the
// page needs them: a few blocks read ahead at once, each block's run of the page's cities handed
// on as soon as it arrives, and recently read blocks kept up to a byte budget for later
// requests. A request holds its read-ahead blocks, never its whole page. Where files can be read
// by range, a block of which the page needs under a third of the cities is read by range. A page
// spanning many blocks (a scan: every city, or a large page) reads its blocks for itself, into
// arrays it gives back once their cities are sent: neither kept for later requests (a scan would
// only push out of the cache what smaller pages read again) nor allocated afresh per block. A page's
// reads, step by step: edge-page-reads.ts; how each block is read: edge-blocks.ts.

export interface RowOptions extends BlockOptions {
  /** Blocks read at once (default 6, the simultaneous connections a Cloudflare Worker may open). */
  readonly concurrency?: number;
  /**
   * Blocks a request keeps once it has used them, for its own later runs (default 16, about 4 MB):
   * a multi-field page whose cities alternate between a few blocks reads each once, whatever the
   * cache. Counted in blocks of BLOCK_BYTES: a smaller one (a large tie group's fine block,
   * edge-cuts.ts) counts for the memory it holds, so that a page scattered over fine blocks keeps
   * as many bytes of them as of full ones.
   */
  readonly keepBlocks?: number;
  /** Where files are held open: the most a page opens before its first byte (default 16); the rest are opened as it is read. */
  readonly holdFiles?: number;
  /** A page spanning more blocks than this (default 16, ~4 MB) reads them for itself into reused arrays, kept by no cache. */
  readonly scanBlocks?: number;
}

export class RowReader {
  private readonly blocks: BlockReads;
  private readonly concurrency: number;
  private readonly limits: PageReadLimits;
  /** Where a page's indices into a layout are written (edge-page.ts): cities() gives them back once the page is read. */
  readonly indexPool = new IndexPool(4);

  constructor(
    read: (path: string, into?: Into) => Promise<Uint8Array>,
    tag: Uint8Array,
    options: RowOptions,
    /** Where files can be held open: a page's blocks are all opened (and their tags checked) before its first city is read. */
    open?: OpenSiteFile,
  ) {
    this.concurrency = Math.max(1, options.concurrency ?? 6);
    this.blocks = new BlockReads(read, tag, this.concurrency, options, open);
    this.limits = {
      blocks: this.blocks,
      concurrency: this.concurrency,
      keepBlocks: Math.max(0, options.keepBlocks ?? 16),
      holdFiles: Math.max(1, options.holdFiles ?? 16),
      scanBlocks: Math.max(0, options.scanBlocks ?? 16),
      holdsFiles: open !== undefined,
    };
  }

  /** Blocks' worth of memory a page keeps for its own later runs (RowOptions.keepBlocks). */
  get keepBlocks(): number {
    return this.limits.keepBlocks;
  }

  /** A page's turns: its reads and opens of files at once (rank files, blocks, heads, ranges) at most `concurrency`. */
  turns(): Slots {
    return new Slots(this.concurrency);
  }

  /** The cities at these indices of a layout where they lie scattered over it: read in windows, by ranges (edge-gather.ts). */
  gathered(layout: LayoutBlocks, indices: Uint32Array, slots = this.turns()): AsyncGenerator<CityBatch> {
    return gathered(this.blocks, layout, indices, this.concurrency, slots);
  }

  /**
   * The serialized cities at these indices of a layout, in the indices' order, as one batch of
   * per run of consecutive indices in one block. A request holds at most `concurrency`
   * blocks being read and `keepBlocks` used ones that a later run of the page needs again. A
   * batch's cities are read until the next batch is asked for: a scan's arrays are then reused.
   * `runs`: the indices already cut into runs of the layout's blocks, where the caller has them;
   * `slots`: the page's turns, where the caller took some already (its rank files' reads).
   * Indices taken from indexPool are given back to it once the page is read.
   */
  async *cities(
    layout: LayoutBlocks,
    indices: ArrayLike<number>,
    runs?: Runs,
    slots?: Slots,
  ): AsyncGenerator<CityBatch> {
    const page = new PageReads(this.limits, layout, indices, runs, slots);
    try {
      await page.holdFirstFiles();
      for (let r = 0; r < page.count; r++) {
        page.readAhead(r);
        yield await page.batch(r);
        page.sent();
      }
    } finally {
      page.close();
      if (indices instanceof Uint32Array) this.indexPool.give(indices);
    }
  }
}
