import { ROUTES } from '../core/route-table.js';
import { LAYOUTS } from './edge-files.js';
import { tagBytes } from './edge-format.js';
import { FieldRanks } from './edge-ranks.js';
import { parseIndex } from './edge-index.js';
import type { ReadSiteFile } from './edge-source.js';

// What a server answers every ordering from without ranking a field itself: the rank files the
// build wrote into the site's edge data (collated once, at build time), all read before it answers.

/**
 * The rank files of a site of `count` cities, all read: each field's ranks and orders are derived
 * from them in linear passes (CityIndex.rankAll does it before the site is answered), with the
 * data's tag (computed answers' ETags name it, as an edge function's do). Null when
 * the site holds no edge data this version reads, or data of another count of cities: the caller
 * then ranks the fields itself (slower, the same answers).
 */
export async function siteRanks(read: ReadSiteFile, count: number): Promise<{ ranks: FieldRanks; tag: string } | null> {
  try {
    const index = parseIndex(await read(ROUTES.edge.index));
    if (index.count !== count) return null;
    const ranks = new FieldRanks(read, index, tagBytes(index.tag));
    await ranks.load(LAYOUTS);
    return { ranks, tag: index.tag };
  } catch {
    return null;
  }
}
