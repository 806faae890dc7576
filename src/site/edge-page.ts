import type { CityBatch } from '../core/envelope-stream.js';
import type { Orders } from '../core/orders.js';
import type { pageOf } from '../core/page.js';
import { ROUTES } from '../core/route-table.js';
import type { EdgeIndex } from './edge-files.js';
import { blocksOf } from './edge-index.js';
import type { FieldRanks } from './edge-ranks.js';
import type { RowReader } from './edge-rows.js';
import { readCities, type LayoutBlocks, type Runs } from './edge-runs.js';

// Which layout a page's cities are read from, and at which of its indices: a contiguous run of
// the default ordering's or a field's ascending layout; else, once the terms' rank files are
// read, the layout of one term where the blocks holding the page's cities hold the fewest cities
// (blocks differ in size where a large tie group is cut finer: edge-cuts.ts). Where only the
// default ordering's layout is deployed (AWS Lambda), a page of another ordering is gathered from
// it: the default rank file says where each of its cities lies there.

/** A build as an edge source has loaded it: its index, the rank files read, its orders and its blocks. */
export interface Loaded {
  readonly index: EdgeIndex;
  readonly fields: FieldRanks;
  readonly orders: Orders;
  readonly rows: RowReader;
  /** Only the default ordering's layout is deployed (EdgeSourceOptions.oneLayout). */
  readonly oneLayout?: boolean;
}

type Page = NonNullable<ReturnType<typeof pageOf>>;

/** The page's cities, as batches read from its layout's blocks. */
export async function pageCities(
  { index, fields, orders, rows, oneLayout }: Loaded,
  page: Page,
): Promise<AsyncIterable<CityBatch>> {
  const { start, end } = page.slice;
  const terms = orders.decisive(page.ordering);
  if (terms.length === 0 || (terms.length === 1 && !terms[0]!.descending && !oneLayout)) {
    return rows.cities(blocksOf(index, terms[0]?.field ?? ROUTES.absent), counting(index.count).subarray(start, end));
  }
  // Every read and open of the page takes one of its turns, its rank files' reads too (up to 16 at once else).
  const slots = rows.turns();
  const turn = <T>(read: () => Promise<T>) => slots.run(read);
  if (oneLayout) {
    // Where each of the page's cities lies in the default ordering's layout: read from there by position.
    await fields.load([...terms.map((t) => t.field), ROUTES.absent], turn);
    const at = fields.inverse(ROUTES.absent);
    const indices = orders.positions(terms, start, end).map((p) => at[p]!);
    return rows.gathered(blocksOf(index, ROUTES.absent), indices, slots);
  }
  await fields.load(
    terms.map((t) => t.field),
    turn,
  );
  const positions = orders.positions(terms, start, end);
  // The page's cities lie together in its first field's layout unless that field has large ties
  // (many cities of one value, ordered there by id): then another term's layout may hold them in
  // fewer blocks. The layout read is the one whose blocks read for them hold the fewest cities
  // (about their bytes), a block read again counted again: what a platform reading blocks whole
  // reads. A page of every city of `-name_sp,name_en` at 140k cities (name_sp in 2 groups of
  // 67,600, in fine blocks, in which name_en scatters them) read 14,785 of name_sp's fine blocks
  // (178 MB); name_en's layout, read once per group, is ~600 blocks.
  // The runs readCities cut the indices into are the page's reads' (not cut again there).
  let best: { blocks: LayoutBlocks; indices: Uint32Array; span: number; runs: Runs } | undefined;
  // Each term's indices in an array of the reader's pool, given back once the page is read (or at once: a layout not read).
  for (const field of terms.map((t) => t.field)) {
    const at = fields.inverse(field);
    const indices = rows.indexPool.take(positions.length);
    for (let i = 0; i < positions.length; i++) indices[i] = at[positions[i]!]!;
    const blocks = blocksOf(index, field);
    const span = readCities(blocks, indices, rows.keepBlocks);
    const better = !best || span.cities < best.span;
    rows.indexPool.give(better ? (best?.indices ?? EMPTY) : indices);
    if (better) best = { blocks, indices, span: span.cities, runs: span.runs };
    if (span.blocks <= 1) break;
  }
  return rows.cities(best!.blocks, best!.indices, best!.runs, slots);
}

/**
 * 0, 1, ... n-1, made once (grown to the largest count asked for): a contiguous page's indices are a view of it. A new array
 * per page (560 KB for a page of every city at 140k cities) lived through the answer, was
 * promoted, and, dead once the answer ended, counted towards V8's next full collection.
 */
function counting(n: number): Uint32Array {
  if (!(COUNTING.length >= n)) COUNTING = Uint32Array.from({ length: n }, (_, i) => i);
  return COUNTING;
}

let COUNTING = new Uint32Array(0);
const EMPTY = new Uint32Array(0);
