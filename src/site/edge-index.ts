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
  return { starts: entry, count: index.count, path: (block) => (paths[block] ??= blockPath(own, block)) };
}
