import type { NameField } from '../core/fields.js';
import type { Ordering } from '../core/ordering.js';
import type { OrderSource } from '../core/orders.js';
import type { Ranks } from '../core/rank-order.js';
import { ROUTES } from '../core/route-table.js';
import { rankPath, type EdgeIndex, type Layout } from './edge-files.js';
import { decodeRanks, isGroupStart, MixedBuilds, type RankFile } from './edge-format.js';

// The rank files an edge source has read (edge-files.ts): each field's ascending order and groups
// of equal values, from which its ranks, its descending order and where each city lies in its
// layout are derived once, on first use.

/** The rank files read so far, as an OrderSource: ranks and descending orders derived on first use. */
export class FieldRanks implements OrderSource {
  readonly count: number;
  private readonly files = new Map<Layout, RankFile>();
  private readonly pending = new Map<Layout, Promise<void>>();
  private readonly ranked = new Map<NameField, Ranks>();
  private readonly descending = new Map<NameField, Uint32Array>();
  private readonly inverses = new Map<Layout, Uint32Array>();

  constructor(
    private readonly read: (path: string) => Promise<Uint8Array>,
    private readonly index: EdgeIndex,
    private readonly tag: Uint8Array,
  ) {
    this.count = index.count;
  }

  /** Reads the rank files of these fields (or the default ordering's) not read yet, each in its turn of the page's reads (`turn`). */
  async load(
    names: readonly Layout[],
    turn: <T>(read: () => Promise<T>) => Promise<T> = (read) => read(),
  ): Promise<void> {
    await Promise.all(
      names
        .filter((name) => !this.files.has(name))
        .map((name) => {
          let loading = this.pending.get(name);
          if (!loading) {
            const path = rankPath(name);
            loading = turn(() => this.read(path)).then(
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
      // Copied city by city: a subarray and a set() per group made ~140k of each per field at 140k
      // cities: ~120 ms of CPU at each reload of a served site, now ~35 ms.
      let at = 0;
      for (let end = ascending.length; end > 0; ) {
        let start = end - 1;
        while (!isGroupStart(groupStarts, start)) start--;
        for (let i = start; i < end; i++) order[at++] = ascending[i]!;
        end = start;
      }
      this.descending.set(term.field, order);
    }
    return order;
  }

  /** Where each dataset position lies in a layout (its rank file read): the inverse of its order. */
  inverse(layout: Layout): Uint32Array {
    let at = this.inverses.get(layout);
    if (!at) {
      const { order } = this.file(layout);
      at = new Uint32Array(this.count);
      for (let i = 0; i < order.length; i++) at[order[i]!] = i;
      this.inverses.set(layout, at);
    }
    return at;
  }

  private file(name: Layout): RankFile {
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
