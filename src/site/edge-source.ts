import type { Bytes } from '../core/bytes.js';
import { CitiesApiError } from '../core/errors.js';
import { envelopeStream, type PartSource } from '../core/envelope-stream.js';
import { envelopeHead } from '../core/json-text.js';
import { Orders } from '../core/orders.js';
import {
  answerListing,
  INVALID_PAGE,
  listingFrame,
  onePageIndex,
  pageOf,
  type ListingAnswer,
  type PageIndex,
} from '../core/page.js';
import type { QueryPair } from '../core/query-string.js';
import { ROUTES } from '../core/route-table.js';
import { MixedBuilds, tagBytes } from './edge-format.js';
import type { Into } from './byte-pool.js';
import { parseIndex } from './edge-index.js';
import { type Loaded, pageCities } from './edge-page.js';
import { FieldRanks } from './edge-ranks.js';
import type { OpenSiteFile } from './edge-blocks.js';
import { RowReader, type RowOptions } from './edge-rows.js';
import { once, primed, resetOnMixed } from './edge-streams.js';

// The listing answered from a site's edge data (edge-files.ts) with whatever fetches a site file.
// Per request: the index once per instance; a page of the default ordering or of a field ascending
// is a contiguous run of its layout, read from the one or few blocks holding it; a descending or
// multi-field page also reads, once per instance, the rank files of its fields (4 bytes a city
// each) to find where its cities lie in each field's layout, and reads the layout where they span
// the fewest blocks (its first field's, unless that field's large ties scatter them). Where the
// platform reads files by range (options.readRange, or files held open), a block of which the page
// needs few cities is read by range (edge-ranges.ts). No ICU, never the whole dataset (but for a
// page of every city), and a page streamed as its blocks arrive. The bytes are answerListing's.

/** Reads one file of the site by its path relative to the site's root (`_cities-api/edge/...`), into an array `into` gives where given; rejects when it cannot; stops where it can once `signal` (edge-site.ts) is aborted. */
export type ReadSiteFile = (path: string, into?: Into, signal?: AbortSignal) => Promise<Uint8Array>;

export interface EdgeSourceOptions extends RowOptions {
  /** The most cities a page assembled whole (indexFor, answer) may hold (default 20,000): larger ones reject with PageTooLarge; a stream has no limit. */
  readonly maxPageCities?: number;
  /** The most cities a streamed page may hold where the platform caps a streamed response (Lambda), and that cap said for the error. */
  readonly streamLimit?: { readonly cities: number; readonly why: string };
  /** Multi-field orderings kept whole (default 4; each is 4 bytes a city). */
  readonly orderCache?: number;
  /**
   * Where the site can be rebuilt under a running instance (self-hosted): what identifies the
   * index file now (e.g. its inode and mtime), asked before each request; when it changes, the
   * index is read again and, its tag changed, the new build is answered from.
   */
  readonly indexVersion?: () => Promise<string>;
  /** Opens site files, held while a page is read: a page started on one build finishes on it. */
  readonly open?: OpenSiteFile;
  /**
   * Only the default ordering's layout is deployed (AWS Lambda's package holds the cities once):
   * a page of any other ordering is gathered from it, by ranges (readRange) where it can be.
   */
  readonly oneLayout?: boolean;
}

/** A page too large for the edge to assemble: its answer must come from a file or another server. */
export class PageTooLarge extends CitiesApiError {
  constructor(
    readonly cities: number,
    readonly limit: number,
    why = 'an edge function answers',
  ) {
    super(`a page of ${cities} cities is more than the ${limit} ${why}; ask for a smaller page_size`);
  }
}

/** A listing streamed: its status, and its bytes as they are read (once). */
export interface StreamedListing {
  readonly status: 200 | 404;
  readonly body: AsyncIterable<Bytes>;
  /** The tag and number of cities of the build it is read from (its ETag names them). */
  readonly tag: string;
  readonly count: number;
}

/** Cities a page assembled whole may hold where the platform sets no other cap (memory: an isolate has 128 MB). */
export const EDGE_PAGE_CITIES = 20_000;

export class EdgeSource {
  private index: Promise<Loaded> | undefined;
  private current: Loaded | undefined;
  /** indexVersion() when the index was last read. */
  private version: string | undefined;
  private readonly maxPageCities: number;

  constructor(
    private readonly read: ReadSiteFile,
    private readonly options: EdgeSourceOptions = {},
  ) {
    this.maxPageCities = options.maxPageCities ?? EDGE_PAGE_CITIES;
  }

  /** The number of cities (reads the index on first use). */
  async count(): Promise<number> {
    return (await this.loaded()).index.count;
  }

  /** The data's tag (reads the index on first use): it changes with every build of other data. */
  async tag(): Promise<string> {
    return (await this.loaded()).index.tag;
  }

  /**
   * What answerListing needs to answer this query (the same query, with any base URL): the
   * page's positions and cities, read first. Its `positions` and `json` serve this page only.
   */
  async indexFor(pairs: readonly QueryPair[]): Promise<PageIndex> {
    return this.guarded(async (loaded) => {
      const page = pageOf(loaded.index.count, pairs);
      if (!page) return onePageIndex(loaded.index.count, page, () => new Uint8Array(0));
      const { start, end } = page.slice;
      if (end - start > this.maxPageCities) throw new PageTooLarge(end - start, this.maxPageCities);
      const cities: Bytes[] = [];
      for await (const batch of await pageCities(loaded, page))
        for (let k = 0; k < batch.length; k++) cities.push(batch.at(k).slice());
      return onePageIndex(loaded.index.count, page, (i) => cities[i]!);
    });
  }

  /** answerListing(index of the whole dataset, pairs, baseUrl), byte for byte, from the files the page needs. */
  async answer(pairs: readonly QueryPair[], baseUrl: string): Promise<ListingAnswer> {
    return answerListing(await this.indexFor(pairs), pairs, baseUrl);
  }

  /** The same bytes as answer(), streamed (into `parts`' arrays): the page's layout and rank files are found first, its cities read as it is sent. */
  async stream(pairs: readonly QueryPair[], baseUrl: string, parts?: PartSource): Promise<StreamedListing> {
    return this.guarded(async (loaded) => {
      const { tag, count } = loaded.index;
      const frame = listingFrame(count, pairs, baseUrl);
      if (!frame) return { status: 404, body: once(INVALID_PAGE), tag, count };
      const { streamLimit } = this.options;
      const cities = frame.page.slice.end - frame.page.slice.start;
      if (streamLimit && cities > streamLimit.cities)
        throw new PageTooLarge(cities, streamLimit.cities, streamLimit.why);
      const head = envelopeHead(loaded.index.count, frame.next, frame.previous);
      // The first batch read before answering: a missing or foreign file is still a clear 500, not a cut 200.
      const batches = await primed(await pageCities(loaded, frame.page));
      const reset = () => this.forget(loaded);
      return { status: 200, body: resetOnMixed(envelopeStream(head, batches, parts), reset), tag, count };
    });
  }

  /** Runs `work` on the build loaded; failing before it answers on files of another build, or as the index changed, once more on the new index. */
  private async guarded<T>(work: (loaded: Loaded) => Promise<T>, again = true): Promise<T> {
    const loaded = await this.loaded();
    try {
      return await work(loaded);
    } catch (error) {
      const probe = this.options.indexVersion;
      // Files missing or of another build: a rebuild under way, if the index changed meanwhile.
      const rebuilt = again && probe !== undefined && (await probe().catch(() => this.version)) !== this.version;
      if (error instanceof MixedBuilds || rebuilt) this.forget(loaded);
      if (rebuilt || (again && probe && error instanceof MixedBuilds)) return this.guarded(work, false);
      throw error;
    }
  }

  /** Files of another build than the index read first (a new deploy): the next request reads them all again. */
  private forget(loaded: Loaded): void {
    if (this.index && loaded === this.current) this.index = undefined;
  }

  private async loaded(): Promise<Loaded> {
    const probe = this.options.indexVersion;
    if (probe) {
      const version = await probe();
      // Requests under way keep the build they loaded; the next ones read the new index.
      if (version !== this.version) [this.version, this.index] = [version, undefined];
    }
    return this.load();
  }

  private load(): Promise<Loaded> {
    this.index ??= this.read(ROUTES.edge.index).then((bytes) => {
      const index = parseIndex(bytes);
      const tag = tagBytes(index.tag);
      const fields = new FieldRanks(this.read, index, tag);
      const loaded: Loaded = {
        index,
        fields,
        orders: new Orders(fields, this.options.orderCache ?? 4),
        rows: new RowReader(this.read, tag, this.options, this.options.open),
        oneLayout: this.options.oneLayout === true,
      };
      this.current = loaded;
      return loaded;
    });
    // A failed read is not kept: the next request tries again.
    this.index.catch(() => (this.index = undefined));
    return this.index;
  }
}
