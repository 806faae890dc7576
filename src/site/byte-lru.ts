// Values kept by key up to a budget of bytes, the least recently used dropped first: the edge
// reader's blocks and block heads.

export class ByteLru<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private kept = 0;

  constructor(private readonly budget: number) {}

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value, now the most recently used. */
  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.value;
  }

  /** Keeps a value of `bytes` (none larger than the budget), dropping the oldest beyond it. */
  set(key: string, value: V, bytes: number): void {
    if (bytes > this.budget) return;
    const old = this.entries.get(key);
    if (old) [this.kept] = [this.kept - old.bytes, this.entries.delete(key)];
    this.entries.set(key, { value, bytes });
    this.kept += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.kept <= this.budget) break;
      this.entries.delete(oldest);
      this.kept -= entry.bytes;
    }
  }
}
