import { CitiesApiError } from '../core/errors.js';
import type { NameField } from '../core/fields.js';
import type { Ordering } from '../core/ordering.js';
import { Orders, type OrderSource } from '../core/orders.js';
import { answerListing, onePageIndex, pageOf, type ListingAnswer, type PageIndex } from '../core/page.js';
import type { QueryPair } from '../core/query-string.js';
import type { Ranks } from '../core/rank-order.js';
import { ROUTES } from '../core/route-table.js';
import { ChunkReader } from './edge-chunks.js';
import { chunkPath, rankPath, type EdgeIndex } from './edge-files.js';
import { decodeRanks, isGroupStart, MixedBuilds, tagBytes, type RankFile } from './edge-format.js';

// The listing answered from a site's edge data (edge-files.ts) with whatever fetches a site file:
// per request, the index once, the rank files of the ordering's fields, then only the chunks that
// hold the page's cities. No ICU and never the whole dataset: an isolate keeps the rank files it
// read (4 bytes a city each, plus as much again for a field's ranks or descending order once
// needed) and recently read chunks up to a byte budget. The bytes are answerListing's.

/** Reads one file of the site by its path relative to the site's root (`_cities-api/edge/...`); rejects when it cannot. */
export type ReadSiteFile = (path: string) => Promise<Uint8Array>;

export interface EdgeSourceOptions {
  /** Bytes of chunks kept for later requests (default 24 MB; 0 keeps none). */
  readonly cacheBytes?: number;
  /** The most cities one page may hold (default 20,000, about 10 MB of JSON): larger ones reject with PageTooLarge. */
  readonly maxPageCities?: number;
  /** Chunks read at once (default 6, the simultaneous connections a Cloudflare Worker may open). */
  readonly concurrency?: number;
  /** Multi-field orderings kept whole (default 4; each is 4 bytes a city). */
  readonly orderCache?: number;
}

/** A page too large for the edge to assemble: its answer must come from a file or another server. */
export class PageTooLarge extends CitiesApiError {
  constructor(
    readonly cities: number,
    readonly limit: number,
  ) {
    super(`a page of ${cities} cities is more than the ${limit} an edge function answers; ask for a smaller page_size`);
  }
}

export class EdgeSource {
  private index: Promise<Loaded> | undefined;
  private readonly maxPageCities: number;

  constructor(
    private readonly read: ReadSiteFile,
    private readonly options: EdgeSourceOptions = {},
  ) {
    this.maxPageCities = options.maxPageCities ?? 20_000;
  }

  /** The number of cities (reads the index on first use). */
  async count(): Promise<number> {
    return (await this.loaded()).index.count;
  }

  /**
   * What answerListing needs to answer this query (the same query, with any base URL): the
   * page's positions and cities, read first. Its `positions` and `json` serve this page only.
   */
  async indexFor(pairs: readonly QueryPair[]): Promise<PageIndex> {
    const loaded = await this.loaded();
    try {
      return await this.prepare(loaded, pairs);
    } catch (error) {
      // Files of another build than the index read first (a new deploy): the next request reads them all again.
      if (error instanceof MixedBuilds && this.index) this.index = undefined;
      throw error;
    }
  }

  private async prepare({ index, fields, orders, chunks }: Loaded, pairs: readonly QueryPair[]): Promise<PageIndex> {
    const page = pageOf(index.count, pairs);
    if (!page) return onePageIndex(index.count, page, () => new Uint8Array(0));
    const { start, end } = page.slice;
    if (end - start > this.maxPageCities) throw new PageTooLarge(end - start, this.maxPageCities);
    await fields.load(page.ordering.length ? orders.decisive(page.ordering).map((t) => t.field) : [ROUTES.absent]);
    const cities = await chunks.cities(orders.positions(page.ordering, start, end));
    return onePageIndex(index.count, page, (i) => cities[i]!);
  }

  /** answerListing(index of the whole dataset, pairs, baseUrl), byte for byte, from the files the page needs. */
  async answer(pairs: readonly QueryPair[], baseUrl: string): Promise<ListingAnswer> {
    return answerListing(await this.indexFor(pairs), pairs, baseUrl);
  }

  private loaded(): Promise<Loaded> {
    this.index ??= this.read(ROUTES.edge.index).then((bytes) => {
      const index = parseIndex(bytes);
      const tag = tagBytes(index.tag);
      const fields = new FieldRanks(this.read, index, tag);
      const chunks = new ChunkReader(this.read, index.chunkCities, tag, chunkPath, this.options);
      return { index, fields, orders: new Orders(fields, this.options.orderCache ?? 4), chunks };
    });
    // A failed read is not kept: the next request tries again.
    this.index.catch(() => (this.index = undefined));
    return this.index;
  }
}

interface Loaded {
  readonly index: EdgeIndex;
  readonly fields: FieldRanks;
  readonly orders: Orders;
  readonly chunks: ChunkReader;
}

function parseIndex(bytes: Uint8Array): EdgeIndex {
  let index: EdgeIndex;
  try {
    index = JSON.parse(new TextDecoder().decode(bytes)) as EdgeIndex;
  } catch {
    throw new CitiesApiError(`${ROUTES.edge.index} is not JSON: deploy the files of a site built by this version`);
  }
  if (
    index?.format !== 1 ||
    !Number.isSafeInteger(index.count) ||
    !(index.chunkCities > 0) ||
    typeof index.tag !== 'string'
  ) {
    throw new CitiesApiError(
      `${ROUTES.edge.index} is not an edge index of format 1: rebuild the site with this version`,
    );
  }
  return index;
}

type RankName = NameField | typeof ROUTES.absent;

/** The rank files read so far, as an OrderSource: ranks and descending orders derived on first use. */
class FieldRanks implements OrderSource {
  readonly count: number;
  private readonly files = new Map<RankName, RankFile>();
  private readonly pending = new Map<RankName, Promise<void>>();
  private readonly ranked = new Map<NameField, Ranks>();
  private readonly descending = new Map<NameField, Uint32Array>();

  constructor(
    private readonly read: ReadSiteFile,
    private readonly index: EdgeIndex,
    private readonly tag: Uint8Array,
  ) {
    this.count = index.count;
  }

  /** Reads the rank files of these fields (or the default ordering's) not read yet. */
  async load(names: readonly RankName[]): Promise<void> {
    await Promise.all(
      names
        .filter((name) => !this.files.has(name))
        .map((name) => {
          let loading = this.pending.get(name);
          if (!loading) {
            const path = rankPath(name);
            loading = this.read(path).then(
              (bytes) => void this.files.set(name, checkedRanks(decodeRanks(bytes, this.tag, path), this.count, path)),
            );
            loading.finally(() => this.pending.delete(name)).catch(() => undefined);
            this.pending.set(name, loading);
          }
          return loading;
        }),
    );
  }

  distinct(field: NameField): number {
    return this.index.distinct[field];
  }

  ranks(field: NameField): Ranks {
    let ranks = this.ranked.get(field);
    if (!ranks) {
      const { order, groupStarts } = this.file(field);
      const values = new Uint32Array(this.count);
      let rank = -1;
      for (let i = 0; i < order.length; i++) values[order[i]!] = isGroupStart(groupStarts, i) ? ++rank : rank;
      ranks = { ranks: values, distinct: rank + 1 };
      this.ranked.set(field, ranks);
    }
    return ranks;
  }

  single(ordering: Ordering): Uint32Array {
    const [term] = ordering;
    if (!term) return this.file(ROUTES.absent).order;
    if (!term.descending) return this.file(term.field).order;
    let order = this.descending.get(term.field);
    if (!order) {
      // The groups of equal values last to first, each keeping its order (ids ascending).
      const { order: ascending, groupStarts } = this.file(term.field);
      order = new Uint32Array(this.count);
      let at = 0;
      for (let end = ascending.length; end > 0; ) {
        let start = end - 1;
        while (!isGroupStart(groupStarts, start)) start--;
        order.set(ascending.subarray(start, end), at);
        at += end - start;
        end = start;
      }
      this.descending.set(term.field, order);
    }
    return order;
  }

  private file(name: RankName): RankFile {
    const file = this.files.get(name);
    if (!file) throw new Error(`rank file of ${name} used before being read`);
    return file;
  }
}

function checkedRanks(file: RankFile, count: number, path: string): RankFile {
  if (file.order.length !== count || (count > 0 && !isGroupStart(file.groupStarts, 0))) {
    throw new MixedBuilds(
      `${path} does not hold the ${count} cities of the edge index: deploy the site's files of one build together`,
    );
  }
  return file;
}
