import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CityIndex } from '../core/city-index.js';
import { CitiesApiError } from '../core/errors.js';
import { CityTable } from '../core/city-table.js';
import type { TableParts } from '../core/table-parts.js';
import type { Collation } from '../core/collation.js';
import { NAME_FIELDS, type NameField } from '../core/fields.js';
import { orderingKey, type Ordering } from '../core/ordering.js';
import type { OrderSource } from '../core/orders.js';
import type { Ranks } from '../core/rank-order.js';
import { DATASET_PATH } from '../site/manifest.js';
import { siteRanks } from '../site/site-ranks.js';
import { composeInThread } from './compose-thread.js';
import { datasetMemory, pageMemory, type WasmMemory } from './page-memory.js';

// The heavy part of loading a site (its dataset parsed, every field's ranks and one-field orders
// read or computed) as plain typed arrays: made where it costs no request anything (a thread,
// site-data-thread.ts), then handed over without copying (all of it in shared memory, see
// sharedData) and made an index again in O(fields).

/** A site's dataset and every field's ranks and one-field (and default) orders. */
export interface SiteData {
  readonly table: TableParts;
  readonly ranks: Readonly<Record<NameField, Ranks>>;
  /** By orderingKey(): the default ordering and each field ascending and descending. */
  readonly singles: Readonly<Record<string, Uint32Array>>;
  /** The edge data's tag (computed answers' ETags name it); absent when the site holds none this version reads. */
  readonly tag: string | undefined;
  /** The shared WebAssembly memory the table's chunks lie in (page-memory.ts), where WebAssembly runs. */
  readonly memory?: WasmMemory | undefined;
}

/**
 * How the site's files are read: `async` through libuv's threads, or `sync` on the calling thread.
 * A thread of its own at the lowest priority (site-data-worker.ts) reads `sync`: libuv's threads
 * run at the answering thread's priority, and copying the dataset (70 MB at 140k cities) and
 * faulting its pages in there cost about 110 ms of CPU that competed with answering, at every reload.
 */
export type SiteReads = 'async' | 'sync';

/**
 * Reads the dataset of the site whose files are under `root`, and ranks every field (from its rank
 * files, else with `collation`). `into`: a memory no site reads any more (site-memories.ts), where
 * the dataset is read (the data's `memory` is then that one), else a new one.
 */
export async function readSiteData(
  root: string,
  collation: Collation,
  reads: SiteReads = 'async',
  into?: WasmMemory,
): Promise<SiteData> {
  const { bytes, memory } = await readShared(join(root, DATASET_PATH), reads, into);
  const table = CityTable.fromDatasetFile(bytes);
  const readFileOf = (path: string) =>
    reads === 'sync' ? Promise.resolve(readFileSync(join(root, path))) : readFile(join(root, path));
  const edge = await siteRanks(readFileOf, table.count);
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
  return { table: table.parts(), ranks, singles, tag: edge?.tag, memory };
}

/**
 * `data` with its dataset in shared memory too (each part copied once, in the reading thread), to
 * hand to the thread that answers. An ArrayBuffer moved there would count as that thread's external
 * memory: 100 MB arriving at 140k cities made V8 start a full GC on it at once ("external memory
 * pressure"), and another when the previous site's were freed, pausing it for milliseconds; V8
 * counts shared memory as no thread's, so neither happens.
 */
export function sharedData(data: SiteData): SiteData {
  const { ids, top, chunks, spans } = data.table;
  // The table's other fields as they are: a field listed one by one here was lost (`joined`, 2f3cd30).
  const table = { ...data.table, ids: shared(ids), top: shared(top), chunks: chunks.map(shared), spans: shared(spans) };
  return { ...data, table };
}

/**
 * A file's bytes read straight into shared memory (a WebAssembly memory, where pages are assembled:
 * page-memory.ts): the dataset file becomes the table's storage (CityTable.fromDatasetFile), so
 * sharedData() has nothing to copy. Copied from a Buffer, the file was held twice while the site
 * loaded: 68 MB more peak RSS at 140k cities.
 */
async function readShared(
  path: string,
  reads: SiteReads,
  into: WasmMemory | undefined,
): Promise<{ bytes: Uint8Array; memory?: WasmMemory }> {
  const file = reads === 'sync' ? openSyncFile(path) : await open(path, 'r');
  try {
    const size = (await file.stat()).size;
    const held = datasetMemory(size, into) ?? { bytes: new Uint8Array(new SharedArrayBuffer(size)) };
    const { bytes } = held;
    for (let at = 0; at < bytes.length; ) {
      const { bytesRead } = await file.read(bytes, at, bytes.length - at, at);
      if (!bytesRead)
        throw new CitiesApiError(
          `${path} was cut while it was read (${at} of its ${bytes.length} bytes): another program writes the site; build it again (cities-api build)`,
        );
      at += bytesRead;
    }
    return held;
  } finally {
    await file.close();
  }
}

/** The three calls readShared() makes of a FileHandle, made synchronously on this thread. */
function openSyncFile(path: string) {
  const fd = openSync(path, 'r');
  return {
    stat: async () => fstatSync(fd),
    read: async (bytes: Uint8Array, offset: number, length: number, position: number) => ({
      bytesRead: readSync(fd, bytes, offset, length, position),
    }),
    close: async () => closeSync(fd),
  };
}

/** `view` if it is in shared memory already, else a copy of it there (a Buffer's as a Uint8Array). */
function shared<T extends Uint8Array | Uint32Array | Float64Array>(view: T): T {
  if (view.buffer instanceof SharedArrayBuffer) return view;
  const buffer = new SharedArrayBuffer(view.byteLength);
  const copy =
    view instanceof Float64Array
      ? new Float64Array(buffer)
      : view instanceof Uint32Array
        ? new Uint32Array(buffer)
        : new Uint8Array(buffer);
  copy.set(view as never);
  return copy as T;
}

/** The index answering from `data`: nothing ranked or sorted again; multi-field orders composed in a thread (compose-thread.ts). */
export function indexOf(data: SiteData, collation: Collation): CityIndex {
  const memory = data.memory && pageMemory(data.memory, data.table.chunks);
  return new CityIndex(CityTable.of(data.table, memory), collation, new DataRanks(data), composeInThread);
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
