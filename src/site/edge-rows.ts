import type { Bytes } from '../core/bytes.js';
import type { BlockFile } from './edge-format.js';
import type { Into } from './byte-pool.js';
import { BlockReads, cityOf, type BlockOptions, type OpenedFile, type OpenSiteFile } from './edge-blocks.js';
import { BLOCK_BYTES } from './edge-cuts.js';
import { gathered } from './edge-gather.js';
import { BLOCK_SLACK, RANGE_SLACK } from './edge-ranges.js';
import { neededOf, runsOf, type LayoutBlocks } from './edge-runs.js';

// The cities at given indices of a layout (edge-files.ts), read block by block in the order the
// page needs them: a few blocks read ahead at once, each block's run of the page's cities handed
// on as views as soon as it arrives, and recently read blocks kept up to a byte budget for later
// requests. A request holds its read-ahead blocks, never its whole page. Where files can be read
// by range, a block of which the page needs under a third of the cities is read by range. A page
// spanning many blocks (a scan: every city, or a large page) reads its blocks for itself, into
// arrays it gives back once their cities are sent: neither kept for later requests (a scan would
// only push out of the cache what smaller pages read again) nor allocated afresh per block. How
// each block is read: edge-blocks.ts.

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
  private readonly keepBlocks: number;
  private readonly holdFiles: number;
  private readonly scanBlocks: number;

  constructor(
    read: (path: string, into?: Into) => Promise<Uint8Array>,
    tag: Uint8Array,
    options: RowOptions,
    /** Where files can be held open: a page's blocks are all opened (and their tags checked) before its first city is read. */
    private readonly open?: OpenSiteFile,
  ) {
    this.concurrency = Math.max(1, options.concurrency ?? 6);
    this.blocks = new BlockReads(read, tag, this.concurrency, options, open);
    this.keepBlocks = Math.max(0, options.keepBlocks ?? 16);
    this.holdFiles = Math.max(1, options.holdFiles ?? 16);
    this.scanBlocks = Math.max(0, options.scanBlocks ?? 16);
  }

  /** The cities at these indices of a layout where they lie scattered over it: read in windows, by ranges (edge-gather.ts). */
  gathered(layout: LayoutBlocks, indices: Uint32Array): AsyncGenerator<Bytes[]> {
    return gathered(this.blocks, layout, indices, this.concurrency);
  }

  /**
   * The serialized cities at these indices of a layout, in the indices' order, as one batch of
   * views per run of consecutive indices in one block. A request holds at most `concurrency`
   * blocks being read and `keepBlocks` used ones that a later run of the page needs again. A
   * batch's views are valid until the next batch is asked for: a scan's arrays are then reused.
   */
  async *cities(layout: LayoutBlocks, indices: ArrayLike<number>): AsyncGenerator<Bytes[]> {
    const { starts, path } = layout;
    const { cache, pool } = this.blocks;
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
    // The used blocks' shares of a full block (1 at most each), and their sum.
    const shares = new Map<number, number>();
    let kept = 0;
    const drop = (b: number) => {
      used.delete(b);
      kept -= shares.get(b) ?? 0;
      shares.delete(b);
    };
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
      if (bytes && pool.owns(bytes)) letGo.push(bytes);
      arrays.delete(b);
    };
    // Files held open: the page's first `holdFiles` before its first byte (a rebuild meanwhile
    // cannot cut a page of that many blocks), the others as its reads reach them, each closed
    // after its last run: a page of every city held all ~300 of its files at 140k cities, and
    // four at once took a 1,024-descriptor process to EMFILE.
    const later = new Set<string>();
    try {
      if (this.open) {
        const first = [...new Set(blocks.map(path))].filter((p) => !cache.has(p));
        for (const p of first.splice(this.holdFiles)) later.add(p);
        await this.blocks.hold(first, held);
      }
      for (let r = 0; r < blocks.length; r++) {
        // Start the reads of the next runs' blocks, up to `concurrency` blocks held at once.
        while (ahead < blocks.length && (ahead <= r || pending.size < this.concurrency)) {
          const b = blocks[ahead++]!;
          if (!pending.has(b)) {
            const reused = used.get(b);
            drop(b);
            const few = needed.get(b)!;
            const cities = (starts[b + 1] ?? layout.count) - starts[b]!;
            const start = (file: OpenedFile | undefined) => {
              const { readRange } = this.blocks;
              const range = file
                ? file.range.bind(file)
                : readRange && ((s: number, e: number) => readRange(path(b), s, e));
              if (!range || 3 * few.length >= cities || cache.has(path(b)))
                return scan
                  ? this.blocks.scanned(path(b), file, (bytes) => arrays.set(b, bytes))
                  : this.blocks.block(path(b), file);
              const share = Math.min(slack, BLOCK_SLACK);
              slack -= share;
              return this.blocks.ranged(path(b), cities, few, share, range);
            };
            if (reused) pending.set(b, reused);
            else if (later.delete(path(b)))
              pending.set(
                b,
                this.blocks.hold([path(b)], held).then(() => start(held.get(path(b)))),
              );
            else pending.set(b, start(held.get(path(b))));
          }
          uses.set(b, (uses.get(b) ?? 0) + 1);
        }
        const b = blocks[r]!;
        const block = await pending.get(b)!;
        const batch: Bytes[] = [];
        // The block's path made once a run, not once a city (a page of every city made 140,000 of
        // them, 60 MB of strings a runtime's GC then collected: most of an answer's garbage).
        const file = path(b);
        for (let i = runs.from[r]!; i < runs.from[r + 1]!; i++)
          batch.push(cityOf(block, indices[i]! - starts[b]!, file));
        const left = uses.get(b)! - 1;
        if (left) uses.set(b, left);
        else {
          uses.delete(b);
          if (lastRun.get(b)! > r) {
            used.set(b, pending.get(b)!);
            // The memory it holds: a scan's array (rounded up to the pool's grain), else its bytes.
            shares.set(b, Math.min(1, (arrays.get(b)?.buffer.byteLength ?? block.bytes) / BLOCK_BYTES));
            kept += shares.get(b)!;
          } else {
            held.get(path(b))?.close();
            held.delete(path(b));
            release(b);
          }
          pending.delete(b);
          while (kept > this.keepBlocks && used.size) {
            const oldest = used.keys().next().value!;
            drop(oldest);
            release(oldest);
          }
        }
        yield batch;
        // The batch is sent (its views copied or written): the arrays of the blocks let go are free.
        for (const bytes of letGo.splice(0)) pool.give(bytes);
      }
    } finally {
      for (const reading of pending.values()) reading.catch(() => undefined);
      for (const file of held.values()) file.close();
    }
  }
}
