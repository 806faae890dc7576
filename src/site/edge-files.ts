import { utf8 } from '../core/bytes.js';
import type { CityIndex } from '../core/city-index.js';
import { NAME_FIELDS, type NameField } from '../core/fields.js';
import { fill, ROUTES } from '../core/route-table.js';
import { compactCity, compactLengths } from './compact-cities.js';
import { BLOCK_BYTES, blockStarts, orderedLayouts, sameOrder } from './edge-cuts.js';
import { blockParts, encodeRanks, tagBytes } from './edge-format.js';
import type { SiteFile } from './pages.js';

// The files an edge function answers live queries from (see edge-source.ts): the collation done
// here, at build time. Each ordering a page can start from (the default one, each field ascending)
// has its cities laid out in its order, in blocks (edge-cuts.ts: of at most BLOCK_BYTES, and where
// a host reads files whole, large tie groups in fine blocks of compact cities), so that a page of it is a
// contiguous read of one or a few blocks; a descending or multi-field page reads the same layout
// (a descending one reverses its groups of equal values) with the rank files saying where its
// cities are. Fields whose order is another's (a dataset with one name in every language) share
// that layout. Never the whole dataset per request, and never ICU at run time.

export { BLOCK_BYTES } from './edge-cuts.js';
/** The rank files: one per name field, and the default ordering's. */
export const RANK_FILES = NAME_FIELDS.length + 1;
/** The layouts: the default ordering's, then each field's ascending one. */
export const LAYOUTS: readonly Layout[] = [ROUTES.absent, ...NAME_FIELDS];
export type Layout = NameField | typeof ROUTES.absent;

/** The edge index's content: what a reader needs before any other file. */
export interface EdgeIndex {
  readonly format: 2;
  readonly count: number;
  /** Hex tag of the data (dataset and collation), repeated in every binary file's header. */
  readonly tag: string;
  /** Distinct values of each field under the collation. */
  readonly distinct: Readonly<Record<NameField, number>>;
  /** Per layout: the first index of each of its blocks, or the name of the layout of the same order whose blocks it reads. */
  readonly layouts: Readonly<Record<Layout, readonly number[] | Layout>>;
}

export const rankPath = (name: Layout) => fill(ROUTES.edge.ranks, { ordering: name });
export const blockPath = (layout: Layout, block: number) => fill(ROUTES.edge.block, { layout, block });

/**
 * Every edge file of a site, in a stable order; `tag` names the dataset and collation they come
 * from; `fine`, where given, the most bytes of a block of a large tie group, its cities written
 * compact (edge-cuts.ts, compact-cities.ts).
 */
export function* edgeFiles(index: CityIndex, tag: string, fine?: number): Generator<SiteFile> {
  const tagged = tagBytes(tag);
  const distinct = {} as Record<NameField, number>;
  const layouts = {} as Record<Layout, number[] | Layout>;
  const written: { layout: Layout; order: Uint32Array }[] = [];
  const lengths = index.table.jsonLengths();
  const compact = fine ? compactLengths(index.count, (p) => index.json(p)) : undefined;
  // One layout at a time, a field's ranks dropped once written (its order is kept to share its layout).
  for (const { layout, order, startsGroup, distinct: values } of orderedLayouts(index)) {
    if (values !== undefined) distinct[layout as NameField] = values;
    yield { path: rankPath(layout), body: [encodeRanks(order, startsGroup, tagged)] };
    const same = written.find((w) => sameOrder(w.order, order));
    if (same) {
      layouts[layout] = same.layout;
      continue;
    }
    written.push({ layout, order });
    // Fine blocks (where asked for) hold their cities compact, and are cut by those bytes.
    const cut = { bytes: (i: number) => compact![order[i]!]!, blocks: [] as number[] };
    const starts = blockStarts(order.length, (i) => lengths[order[i]!]!, startsGroup, fine, compact && cut);
    const fineBlocks = new Set(cut.blocks);
    for (let b = 0; b < starts.length; b++) {
      const [start, end] = [starts[b]!, starts[b + 1] ?? order.length];
      const isFine = fineBlocks.has(b);
      // Parts, not one buffer: the cities are the table's own bytes, written without a copy (but compact ones).
      const parts = blockParts(
        Array.from({ length: end - start }, (_, i) => {
          const json = index.json(order[start + i]!);
          return isFine ? compactCity(json) : json;
        }),
        tagged,
        isFine,
      );
      yield { path: blockPath(layout, b), body: { [Symbol.iterator]: () => parts[Symbol.iterator]() } };
    }
    layouts[layout] = starts;
  }
  const head: EdgeIndex = {
    format: 2,
    count: index.count,
    tag,
    distinct,
    layouts: Object.fromEntries(LAYOUTS.map((l) => [l, layouts[l]])) as EdgeIndex['layouts'],
  };
  yield { path: ROUTES.edge.index, body: [utf8(`${JSON.stringify(head)}\n`)] };
}

/** Blocks of one layout of `cityBytes` (an upper estimate: a block ends early only to fit a whole city, far less than a tenth of it). */
const blocksOf = (cityBytes: number) => Math.max(1, Math.ceil((cityBytes * 1.1) / BLOCK_BYTES));

/**
 * Bytes of the edge files of `count` cities whose JSON takes `cityBytes`, for the site's size
 * estimate: at most every layout apart (fields of one order share theirs).
 */
export function edgeBytes(count: number, cityBytes: number): number {
  const header = 16;
  const ranks = RANK_FILES * (header + 4 * count + Math.ceil(count / 8));
  const layouts = LAYOUTS.length * (blocksOf(cityBytes) * header + 4 * count + cityBytes);
  return 400 + 20 * LAYOUTS.length * blocksOf(cityBytes) + ranks + layouts;
}

/** Files of the edge data of `count` cities (at most; `cityBytes` estimated at 600 a city when not known). */
export function edgeFileCount(count: number, cityBytes = 600 * count): number {
  return 1 + RANK_FILES + (count ? LAYOUTS.length * blocksOf(cityBytes) : 0);
}
