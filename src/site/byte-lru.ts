// Values kept by key up to a budget of bytes, the least recently used dropped first (as CLOCK
// does it: a hit marks its entry, eviction moves a marked one to the back once, so a hit never
// reorders the map: a delete and set per hit cost a fifth of a full answer cache's hits): the
// edge reader's blocks and block heads, and serve's computed answers.

interface Entry<V> {
  readonly value: V;
  readonly bytes: number;
  /** Asked for since eviction last passed it over. */
  recent: boolean;
}

export class ByteLru<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private kept = 0;

  constructor(private readonly budget: number) {}

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value, now marked as recently used. */
  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    hit.recent = true;
    return hit.value;
  }

  /** Keeps a value of `bytes` (none larger than the budget), dropping the oldest beyond it. */
  set(key: string, value: V, bytes: number): void {
    if (bytes > this.budget) return;
    const old = this.entries.get(key);
    if (old) [this.kept] = [this.kept - old.bytes, this.entries.delete(key)];
    this.entries.set(key, { value, bytes, recent: false });
    this.kept += bytes;
    while (this.kept > this.budget) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry<V>];
      this.entries.delete(oldest);
      if (entry.recent) {
        entry.recent = false;
        this.entries.set(oldest, entry);
      } else this.kept -= entry.bytes;
    }
  }

  clear(): void {
    this.entries.clear();
    this.kept = 0;
  }

  /** Bytes kept. */
  get size(): number {
    return this.kept;
  }
}
