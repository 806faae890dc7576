import type { CityBatch } from '../core/envelope-stream.js';
import type { BlockFile } from './edge-format.js';
import { type BlockReads, checkRun, type OpenedFile } from './edge-blocks.js';
import { BLOCK_BYTES } from './edge-cuts.js';
import { BLOCK_SLACK, RANGE_SLACK, wholeExtra } from './edge-ranges.js';
import { NeededIndices, runsOf, shareOf, type LayoutBlocks, type Runs } from './edge-runs.js';
import { Slots } from './edge-turns.js';

// One page's reads of a layout's blocks (RowReader.cities, edge-rows.ts), in named steps: hold its
// first files open, start the reads of the next runs' blocks, make a run's batch of cities, then
// keep or let go of its block. A page of many blocks (a scan) reads into the pool's arrays, given
// back once the batch that used them is sent.

/** How RowReader reads: its blocks and limits (RowOptions, edge-rows.ts). */
export interface PageReadLimits {
  readonly blocks: BlockReads;
  readonly concurrency: number;
  readonly keepBlocks: number;
  readonly holdFiles: number;
  readonly scanBlocks: number;
  readonly holdsFiles: boolean;
}

export class PageReads {
  private readonly needed: NeededIndices;
  private slack = RANGE_SLACK;
  private readonly pending = new Map<number, Promise<BlockFile>>();
  // Per block of the layout (typed arrays, not a Map entry each: ~300 for a page of every city,
  // objects that lived through the answer): reads of it started and not yet used, its last run.
  private readonly uses: Uint32Array;
  private readonly lastRun: Int32Array;
  // Blocks this request has used and will use again, the most recent last: read again only once
  // out of it. A block no later run needs is let go at once: a page of every city holds its
  // read-ahead, not 16 blocks more.
  private readonly used = new Map<number, Promise<BlockFile>>();
  // The used blocks' shares of a full block (1 at most each), and their sum.
  private readonly shares = new Map<number, number>();
  private kept = 0;
  private ahead = 0;
  private readonly held = new Map<string, OpenedFile>();
  // A scan's blocks read into the pool's arrays, by block; those let go, given back once the batch that used them is sent.
  private readonly scan: boolean;
  private readonly arrays = new Map<number, Uint8Array>();
  private readonly letGo: Uint8Array[] = [];
  /** Per block of the layout, 1: its file is opened when its read starts (holdFirstFiles). */
  private readonly later: Uint8Array;

  constructor(
    private readonly limits: PageReadLimits,
    private readonly layout: LayoutBlocks,
    private readonly indices: ArrayLike<number>,
    /** The indices cut into runs of the layout's blocks, where the caller has (readCities). */
    private readonly runs: Runs = runsOf(layout.starts, indices),
    // The page's reads and opens of files at once, whole blocks, ranges and opens alike (and its
    // rank files' reads, where the caller gives the Slots it read them through): at most `concurrency`.
    private readonly slots = new Slots(limits.concurrency),
  ) {
    this.needed = new NeededIndices(this.runs, layout.starts, indices);
    const blocks = layout.starts.length;
    [this.uses, this.lastRun, this.later] = [new Uint32Array(blocks), new Int32Array(blocks), new Uint8Array(blocks)];
    this.runs.blocks.forEach((b, r) => (this.lastRun[b] = r));
    this.scan = this.needed.blocks.length > limits.scanBlocks;
  }

  /** One of the page's reads or opens, in its turn. */
  private readonly turn = <T>(work: () => Promise<T>): Promise<T> => this.slots.run(work);

  /** How many runs (batches) the page has. */
  get count(): number {
    return this.runs.blocks.length;
  }

  /**
   * Files held open: the page's first `holdFiles` before its first byte (a rebuild meanwhile
   * cannot cut a page of that many blocks), the others as its reads reach them, each closed after
   * its last run: a page of every city held all ~300 of its files at 140k cities, and four at once
   * took a 1,024-descriptor process to EMFILE.
   */
  async holdFirstFiles(): Promise<void> {
    if (!this.limits.holdsFiles) return;
    const { cache } = this.limits.blocks;
    const first: string[] = [];
    for (const b of this.needed.blocks) {
      const path = this.layout.path(b);
      if (cache.has(path)) continue;
      if (first.length < this.limits.holdFiles) first.push(path);
      else this.later[b] = 1;
    }
    await this.limits.blocks.hold(first, this.held, this.turn);
  }

  /** Starts the reads of the next runs' blocks, up to `concurrency` blocks held at once, run `r`'s at least. */
  readAhead(r: number): void {
    const { blocks } = this.runs;
    const { pending, used, held } = this;
    while (this.ahead < blocks.length && (this.ahead <= r || pending.size < this.limits.concurrency)) {
      const b = blocks[this.ahead++]!;
      if (!pending.has(b)) {
        const reused = used.get(b);
        this.drop(b);
        const path = this.layout.path(b);
        if (reused) pending.set(b, reused);
        else if (this.later[b] === 1) {
          this.later[b] = 0;
          pending.set(
            b,
            this.limits.blocks.hold([path], held, this.turn).then(() => this.start(b, held.get(path))),
          );
        } else pending.set(b, this.start(b, held.get(path)));
      }
      this.uses[b]!++;
    }
  }

  /** Block b's read: whole (cached, a scan's into a pool array) or, where the page needs under a third of its cities and whole costs more (wholeExtra: its bytes more taken from the slack, guessed then set right), by ranges. */
  private start(b: number, file: OpenedFile | undefined): Promise<BlockFile> {
    const { blocks } = this.limits;
    const { starts, path } = this.layout;
    const cities = (starts[b + 1] ?? this.layout.count) - starts[b]!;
    const { readRange } = blocks;
    const range = file ? file.range.bind(file) : readRange && ((s: number, e: number) => readRange(path(b), s, e));
    const needed = this.needed.size(b);
    const guess = (shareOf(cities, this.layout.full) * BLOCK_BYTES) / cities;
    const extra =
      !range || 3 * needed >= cities || blocks.cache.has(path(b))
        ? 0
        : wholeExtra(cities, this.needed.of(b), guess, blocks.heads.has(path(b)), this.slack);
    if (extra !== undefined || !range) {
      this.slack -= extra ?? 0;
      const read = this.slots.run(() =>
        this.scan ? blocks.scanned(path(b), file, (bytes) => this.arrays.set(b, bytes)) : blocks.block(path(b), file),
      );
      return extra ? read.then((block) => ((this.slack += cities * guess - block.bytes), block)) : read;
    }
    const share = Math.min(this.slack, BLOCK_SLACK);
    this.slack -= share;
    return blocks.ranged(path(b), cities, this.needed.of(b), share, (start, end) =>
      this.slots.run(() => range(start, end)),
    );
  }

  /**
   * Run r's cities, once its block is read and checked to hold them: each a view into the block,
   * made as the batch is copied; then the block kept for a later run or let go.
   */
  async batch(r: number): Promise<CityBatch> {
    const b = this.runs.blocks[r]!;
    const first = this.layout.starts[b]!;
    const block = await this.pending.get(b)!;
    const [from, to, indices] = [this.runs.from[r]!, this.runs.from[r + 1]!, this.indices];
    checkRun(block, { indices, from, to, first }, this.layout.path(b));
    this.afterUse(b, r, block);
    return { length: to - from, at: (k) => block.city(indices[from + k]! - first) };
  }

  /** Block b used by run r: if no read of it is still to be used, kept for a later run that needs it, else closed and let go. */
  private afterUse(b: number, r: number, block: BlockFile): void {
    if (--this.uses[b]! > 0) return;
    if (this.lastRun[b]! > r) {
      this.used.set(b, this.pending.get(b)!);
      // The memory it holds: a scan's array (rounded up to the pool's grain), else its bytes.
      this.shares.set(b, Math.min(1, (this.arrays.get(b)?.buffer.byteLength ?? block.bytes) / BLOCK_BYTES));
      this.kept += this.shares.get(b)!;
    } else {
      const path = this.layout.path(b);
      this.held.get(path)?.close();
      this.held.delete(path);
      this.release(b);
    }
    this.pending.delete(b);
    while (this.kept > this.limits.keepBlocks && this.used.size) {
      const oldest = this.used.keys().next().value!;
      this.drop(oldest);
      this.release(oldest);
    }
  }

  /** The batch is sent (its views copied or written): the arrays of the blocks let go are free. */
  sent(): void {
    for (const bytes of this.letGo.splice(0)) this.limits.blocks.pool.give(bytes);
  }

  /** Reads no one waits for any more are let fail quietly; files still open are closed. */
  close(): void {
    for (const reading of this.pending.values()) reading.catch(() => undefined);
    for (const file of this.held.values()) file.close();
  }

  private drop(b: number): void {
    this.used.delete(b);
    this.kept -= this.shares.get(b) ?? 0;
    this.shares.delete(b);
  }

  private release(b: number): void {
    const bytes = this.arrays.get(b);
    if (bytes && this.limits.blocks.pool.owns(bytes)) this.letGo.push(bytes);
    this.arrays.delete(b);
  }
}
