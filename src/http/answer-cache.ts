import { ByteLru } from '../site/byte-lru.js';
import { Doorkeeper } from './doorkeeper.js';
import type { QueryPair } from '../core/query-string.js';

/** A computed answer as sent: its status, its header list as writeHead takes it, its whole body. */
export interface KeptAnswer {
  readonly status: number;
  readonly head: readonly string[];
  readonly body: Uint8Array;
}

/** What an entry costs beyond its key and body: the map's slot, the answer object. */
const ENTRY_OVERHEAD = 128;
/** An answer larger than this share of the budget is not kept (one huge page would evict everything). */
const LARGEST_SHARE = 16;

/**
 * Computed answers of the listing endpoint (compact JSON only: the form a site file would hold),
 * kept beside the route memo under a byte budget (site/byte-lru.ts: least recently used dropped first).
 *
 * What an answer depends on is all in its key or in the cache's owner: the query's decoded
 * pairs, every one of them in the order received (an unknown parameter is carried into the
 * next/previous links), written unambiguously (JSON of the pairs), and the data and settings it
 * was computed from (the site's index and spec objects: a rebuild or a POST makes new ones, and
 * `owner()` then starts an empty cache). So no request can change what another is answered: two
 * requests share an entry only when the same page function would compute the same bytes for both.
 *
 * An answer is kept the second time it is computed: a query asked once (a crawler, a client's
 * unique parameter) would only churn the cache and the garbage collector's old space.
 */
export class AnswerCache {
  private readonly entries: ByteLru<KeptAnswer>;
  private readonly once = new Doorkeeper();
  private index: object | undefined;
  private spec: object | undefined;

  constructor(private readonly budget: number) {
    this.entries = new ByteLru(budget);
  }

  /** This cache for answers computed from `index` with `spec`; emptied when either is another object than last time. */
  owner(index: object, spec: object): this {
    if (index !== this.index || spec !== this.spec) {
      this.forget();
      [this.index, this.spec] = [index, spec];
    }
    return this;
  }

  /** Empty, as new. */
  forget(): void {
    this.entries.clear();
    this.once.clear();
    this.index = this.spec = undefined;
  }

  /**
   * The key of an answer to these query pairs (with the cache's owner): their JSON. `remember`:
   * kept by the pairs list for its next request (a route memo's decision); a list seen for the
   * first time is not (a query asked once would only fill the memo).
   */
  static key(pairs: readonly QueryPair[], remember = true): string {
    if (!remember) return JSON.stringify(pairs);
    let key = keys.get(pairs);
    if (key === undefined) keys.set(pairs, (key = JSON.stringify(pairs)));
    return key;
  }

  get(key: string): KeptAnswer | undefined {
    return this.entries.get(key);
  }

  /**
   * An answer just computed: kept if it was computed once before (and fits). `admitted`: the
   * caller knows it was (its route memo's second sight of the target): kept at once.
   */
  offer(key: string, answer: KeptAnswer, admitted = false): void {
    const cost = costOf(key, answer);
    if (cost > this.budget / LARGEST_SHARE || this.entries.has(key)) return;
    // Kept as a copy of its own: a body is often a view of a shared slab (core/bytes.ts allocBytes),
    // which it would hold whole, and which the sender reuses once the body is sent.
    if (admitted || this.once.again(key)) this.entries.set(key, { ...answer, body: new Uint8Array(answer.body) }, cost);
  }

  /** Bytes held, as counted against the budget. */
  get size(): number {
    return this.entries.size;
  }
}

const keys = new WeakMap<readonly QueryPair[], string>();

function costOf(key: string, answer: KeptAnswer): number {
  return 2 * key.length + answer.body.length + ENTRY_OVERHEAD;
}
