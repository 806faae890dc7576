import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CityIndex } from '../core/city-index.js';
import { CityTable, type TableParts } from '../core/city-table.js';
import type { Collation } from '../core/collation.js';
import { NAME_FIELDS, type NameField } from '../core/fields.js';
import { orderingKey, type Ordering } from '../core/ordering.js';
import type { OrderSource } from '../core/orders.js';
import type { Ranks } from '../core/rank-order.js';
import { DATASET_PATH } from '../site/manifest.js';
import { siteRanks } from '../site/site-ranks.js';
import { composeInThread } from './compose-thread.js';

// The heavy part of loading a site (its dataset parsed, every field's ranks and one-field orders
// read or computed) as plain typed arrays: made where it costs no request anything (a thread,
// site-data-thread.ts), then handed over without copying (the dataset moved, the ranks and orders
// in shared memory) and made an index again in O(fields).

/** A site's dataset and every field's ranks and one-field (and default) orders. */
export interface SiteData {
  readonly table: TableParts;
  readonly ranks: Readonly<Record<NameField, Ranks>>;
  /** By orderingKey(): the default ordering and each field ascending and descending. */
  readonly singles: Readonly<Record<string, Uint32Array>>;
  /** The edge data's tag (computed answers' ETags name it); absent when the site holds none this version reads. */
  readonly tag: string | undefined;
}

/** Reads the dataset of the site whose files are under `root`, and ranks every field (from its rank files, else with `collation`). */
export async function readSiteData(root: string, collation: Collation): Promise<SiteData> {
  const table = CityTable.fromDatasetFile(await readFile(join(root, DATASET_PATH)));
  const edge = await siteRanks((path) => readFile(join(root, path)), table.count);
  const index = new CityIndex(table, collation, edge?.ranks);
  await index.rankAll(NAME_FIELDS, async () => {});
  // In shared memory: the thread that composes multi-field orders reads them without a copy.
  const ranks = {} as Record<NameField, Ranks>;
  const singles: Record<string, Uint32Array> = { [orderingKey([])]: shared(index.single([])) };
  for (const field of NAME_FIELDS) {
    const { ranks: values, distinct } = index.ranks(field);
    ranks[field] = { ranks: shared(values), distinct };
    for (const descending of [false, true]) {
      const ordering = [{ field, descending }];
      singles[orderingKey(ordering)] = shared(index.single(ordering));
    }
  }
  return { table: table.parts(), ranks, singles, tag: edge?.tag };
}

/** A copy of `view` in shared memory. */
function shared<T extends Uint32Array | Uint8Array>(view: T): T {
  const copy = new (view.constructor as new (buffer: SharedArrayBuffer) => T)(new SharedArrayBuffer(view.byteLength));
  copy.set(view);
  return copy;
}

/**
 * The buffers under `data`, each once, to hand over rather than copy. Those no larger than
 * Buffer's pool are left out (copied): a small Buffer may be a slice of the pool, which cannot move.
 */
export function dataBuffers(data: SiteData): ArrayBuffer[] {
  const views = [
    ...Object.values(data.table),
    ...data.table.chunks,
    ...Object.values(data.ranks).map((r) => r.ranks),
    ...Object.values(data.singles),
  ].filter((v): v is ArrayBufferView => ArrayBuffer.isView(v));
  const buffers = new Set(views.map((v) => v.buffer).filter((b) => b instanceof ArrayBuffer));
  return [...buffers].filter((b) => b.byteLength > Buffer.poolSize);
}

/** The index answering from `data`: nothing ranked or sorted again; multi-field orders composed in a thread (compose-thread.ts). */
export function indexOf(data: SiteData, collation: Collation): CityIndex {
  return new CityIndex(CityTable.of(data.table), collation, new DataRanks(data), composeInThread);
}

class DataRanks implements OrderSource {
  readonly count: number;
  constructor(private readonly data: SiteData) {
    this.count = data.table.count;
  }
  distinct(field: NameField): number {
    return this.data.ranks[field].distinct;
  }
  ranks(field: NameField): Ranks {
    return this.data.ranks[field];
  }
  single(ordering: Ordering): Uint32Array {
    const order = this.data.singles[orderingKey(ordering)];
    if (!order) throw new Error(`no presorted order ${orderingKey(ordering)}`);
    return order;
  }
}
