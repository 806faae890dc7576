// A page's indices into a layout (the layout's positions of its cities, edge-page.ts) written into
// arrays given back once the page's cities are read, not a new array per page: a page of every city
// at 135,000 cities made one of 540 KB per term of a multi-field ordering. Living through the
// answer, it outlived V8's young collections; dead in the old generation, its bytes (outside V8's
// heap) waited for the next full collection: under `deno serve` with V8's defaults, the isolate's
// external memory rose 0.6 MB an answer until one came (docs/deno.md).

export class IndexPool {
  private readonly free: Uint32Array[] = [];
  /** The arrays this pool made: only these are taken back. */
  private readonly made = new WeakSet<ArrayBufferLike>();

  /** `most`: arrays kept free at once (the others are let go to the GC). */
  constructor(private readonly most: number) {}

  /** An array of `length` indices: a view of the start of a free array at least as long, else a new one. */
  take(length: number): Uint32Array {
    let best = -1;
    for (let i = 0; i < this.free.length; i++)
      if (this.free[i]!.length >= length && (best < 0 || this.free[i]!.length < this.free[best]!.length)) best = i;
    if (best < 0) {
      const made = new Uint32Array(length);
      this.made.add(made.buffer);
      return made;
    }
    const [array] = this.free.splice(best, 1);
    return array!.subarray(0, length);
  }

  /** Gives back the array `indices` views (whole): its taker reads it no more. One this pool did not make, or already free, is ignored. */
  give(indices: Uint32Array): void {
    const { buffer } = indices;
    if (!this.made.has(buffer) || this.free.some((array) => array.buffer === buffer)) return;
    const whole = new Uint32Array(buffer);
    if (this.free.length < this.most) this.free.push(whole);
    else {
      // The shortest kept goes (a page of every city's array is the one worth keeping).
      const shortest = this.free.reduce((s, array, i) => (array.length < this.free[s]!.length ? i : s), 0);
      if (this.free[shortest]!.length < whole.length) this.free[shortest] = whole;
    }
  }

  /** Arrays free now (for tests). */
  get size(): number {
    return this.free.length;
  }
}
