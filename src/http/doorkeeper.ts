// Which keys were seen once already: a cache or memo keeps a thing the second time it comes, so
// that one asked once (a crawler's query, a client's unique parameter) never fills it, churns it
// or leaves garbage in V8's old space.

/** Keys seen once and not again yet, at most (then forgotten all together): about 100 bytes each. */
export const DOORKEEPER_LIMIT = 4096;

export class Doorkeeper {
  private readonly seen = new Set<string>();

  /** Whether `key` was seen once before (it is then forgotten); else it is remembered as seen. */
  again(key: string): boolean {
    if (this.seen.delete(key)) return true;
    if (this.seen.size >= DOORKEEPER_LIMIT) this.seen.clear();
    this.seen.add(key);
    return false;
  }

  clear(): void {
    this.seen.clear();
  }
}
