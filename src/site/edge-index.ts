import { CitiesApiError } from '../core/errors.js';
import { ROUTES } from '../core/route-table.js';
import { blockPath, LAYOUTS, type EdgeIndex, type Layout } from './edge-files.js';
import { MixedBuilds } from './edge-format.js';
import type { LayoutBlocks } from './edge-runs.js';

// The edge index (edge-files.ts) as a reader takes it: checked to be of the format this version
// reads, and where each layout's blocks are.

/** The edge index's content, checked to be of the format this version reads. */
export function parseIndex(bytes: Uint8Array): EdgeIndex {
  let index: EdgeIndex;
  try {
    index = JSON.parse(new TextDecoder().decode(bytes)) as EdgeIndex;
  } catch {
    throw new CitiesApiError(`${ROUTES.edge.index} is not JSON: deploy the files of a site built by this version`);
  }
  if (
    index?.format !== 2 ||
    !Number.isSafeInteger(index.count) ||
    typeof index.tag !== 'string' ||
    typeof index.layouts !== 'object' ||
    LAYOUTS.some((l) => !index.layouts[l])
  ) {
    throw new CitiesApiError(
      `${ROUTES.edge.index} is not an edge index of format 2: rebuild the site with this version`,
    );
  }
  return index;
}

/** Where the blocks of a layout are (its own, or those of the layout of the same order it names). */
export function blocksOf(index: EdgeIndex, layout: Layout): LayoutBlocks {
  let own: Layout = layout;
  let entry = index.layouts[own];
  if (typeof entry === 'string') entry = index.layouts[(own = entry)];
  if (!Array.isArray(entry))
    throw new MixedBuilds(`${ROUTES.edge.index} lists no blocks for ${layout}: rebuild the site`);
  // Each block's path made once: a page gathered from the layout asks it for every run of cities in a block.
  const paths: string[] = [];
  const path = (block: number) => (paths[block] ??= blockPath(own, block));
  return { starts: entry, count: index.count, path, full: fullBlock(index) };
}

/**
 * The cities of a full block: the most of any block of the default ordering's layout (no tie there
 * is cut finer). Walked once per index (~300 blocks at 140k cities), not once per page: kept by the
 * index object, which only a build's index read makes (nothing a request sets).
 */
function fullBlock(index: EdgeIndex): number {
  let most = FULL.get(index);
  if (most === undefined) {
    const starts = index.layouts[ROUTES.absent];
    most = 1;
    if (Array.isArray(starts))
      for (let b = 0; b < starts.length; b++) most = Math.max(most, (starts[b + 1] ?? index.count) - starts[b]!);
    FULL.set(index, most);
  }
  return most;
}

const FULL = new WeakMap<EdgeIndex, number>();
