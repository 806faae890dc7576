import type { QueryPair } from '../core/query-string.js';
import type { HeaderFields } from './route-types.js';

/** A computed answer as sent: its status, headers and whole body. */
export interface CachedAnswer {
  readonly status: number;
  readonly headers: HeaderFields;
  readonly body: Uint8Array;
}

/** What an entry costs beyond its key and body: the map's slot, the answer object. */
const ENTRY_OVERHEAD = 128;
/** An answer larger than this share of the budget is not kept (one huge page would evict everything). */
const LARGEST_SHARE = 16;

/**
 * Computed answers of the listing endpoint (compact JSON only: the form a site file would hold),
 * kept beside the route memo under a byte budget, the oldest not asked for since eviction last passed it dropped first.
 *
 * What an answer depends on is all in its key or in the cache's owner: the query's decoded
 * pairs, every one of them in the order received (an unknown parameter is carried into the
 * next/previous links), written unambiguously (JSON of the pairs), and the data and settings it
 * was computed from (the site's index and spec objects: a rebuild or a POST makes new ones, and
 * `owner()` then starts an empty cache). So no request can change what another is answered: two
 * requests share an entry only when the same page function would compute the same bytes for both.
 */
/** An answer kept, and whether it was asked for since eviction last passed it over. */
interface Entry {
  readonly answer: CachedAnswer;
  recent: boolean;
}

export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private index: object | undefined;
  private spec: object | undefined;

  constructor(private readonly budget: number) {}

  /** This cache for answers computed from `index` with `spec`; emptied when either is another object than last time. */
  owner(index: object, spec: object): this {
    if (index !== this.index || spec !== this.spec) {
      this.entries.clear();
      this.bytes = 0;
      [this.index, this.spec] = [index, spec];
    }
    return this;
  }

  /** The key of an answer to these query pairs (with the cache's owner); made once per pairs list (a remembered route's). */
  static key(pairs: readonly QueryPair[]): string {
    let key = keys.get(pairs);
    if (key === undefined) keys.set(pairs, (key = JSON.stringify(pairs)));
    return key;
  }

  get(key: string): CachedAnswer | undefined {
    const found = this.entries.get(key);
    if (!found) return undefined;
    // Marked, not moved: a delete and set per hit (the map kept in use order) cost a fifth of a full cache's hits.
    found.recent = true;
    return found.answer;
  }

  set(key: string, answer: CachedAnswer): void {
    const cost = costOf(key, answer);
    if (cost > this.budget / LARGEST_SHARE || this.entries.has(key)) return;
    this.entries.set(key, { answer, recent: false });
    this.bytes += cost;
    // Oldest first, each asked for since it was last passed over moved to the back once (second chance, as CLOCK).
    while (this.bytes > this.budget) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldest);
      if (entry.recent) {
        entry.recent = false;
        this.entries.set(oldest, entry);
      } else this.bytes -= costOf(oldest, entry.answer);
    }
  }

  /** Bytes held, as counted against the budget. */
  get size(): number {
    return this.bytes;
  }
}

const keys = new WeakMap<readonly QueryPair[], string>();

function costOf(key: string, answer: CachedAnswer): number {
  return 2 * key.length + answer.body.length + ENTRY_OVERHEAD;
}
