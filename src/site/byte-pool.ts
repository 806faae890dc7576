// Arrays a reader fills and gives back once their bytes are let go, so that reading a page of
// every city reuses a few blocks' worth of memory instead of allocating the page's bytes again:
// at 140k cities, 68 MB of ~240 KB ArrayBuffers per answer, which a runtime's GC collected late
// (the process held 70-90 MB of them at the answer's peak, in Node as in workerd and Deno).

/**
 * Where a read puts a file's bytes: an array of at least `size` bytes (the read's bytes are a view
 * of its start, or of the same memory in a new ArrayBuffer where the read transferred the array:
 * a BYOB read of a body). Size 0: any array, for a body of unknown length.
 */
export type Into = (size: number) => Uint8Array;

/** Sizes taken are rounded up to this, so that blocks of a few bytes' difference share arrays. */
const GRAIN = 64 * 1024;

export class BytePool {
  private readonly free: Uint8Array[] = [];
  /** The arrays this pool made, and their sizes: only these are taken back (a platform's read may hand out an array it shares). */
  private readonly made = new WeakMap<ArrayBufferLike, number>();

  /** `most`: arrays kept free at once (the others are let go to the GC). */
  constructor(private readonly most: number) {}

  /** The largest array made: the size a read of unknown length starts with. */
  private largest = GRAIN;

  /** An array of at least `size` bytes: a free one, else a new one; for size 0 (a body of unknown length), the largest free one, else one the size of the largest made. */
  readonly take: Into = (size) => {
    const fits = this.free.filter((bytes) => bytes.length >= size);
    const pick = size > 0 ? fits[0] : fits.sort((a, b) => b.length - a.length)[0];
    if (pick) return this.free.splice(this.free.indexOf(pick), 1)[0]!;
    const bytes = new Uint8Array(size > 0 ? Math.ceil(size / GRAIN) * GRAIN : this.largest);
    this.largest = Math.max(this.largest, bytes.length);
    this.made.set(bytes.buffer, bytes.length);
    return bytes;
  };

  /**
   * After a read into `taken` (an array this pool gave) returned `bytes`: where the read
   * transferred the array (`taken` now detached, its memory in `bytes`' ArrayBuffer), that
   * ArrayBuffer is this pool's, to be given back as the one it replaces.
   */
  adopt(taken: Uint8Array, bytes: Uint8Array): void {
    const size = this.made.get(taken.buffer);
    if (size !== undefined && taken.buffer.byteLength === 0 && bytes.buffer.byteLength === size)
      this.made.set(bytes.buffer, size);
  }

  /** Whether `bytes` views an array this pool made. */
  owns(bytes: Uint8Array): boolean {
    return this.made.has(bytes.buffer);
  }

  /** Gives back the array `bytes` views, if this pool made it: the caller holds no view of it any more. */
  give(bytes: Uint8Array): void {
    const { buffer } = bytes;
    if (!this.made.has(buffer) || this.free.length >= this.most) return;
    const whole = new Uint8Array(buffer);
    if (!this.free.some((b) => b.buffer === buffer)) this.free.push(whole);
  }

  /** Arrays free now (for tests). */
  get size(): number {
    return this.free.length;
  }
}

/**
 * Arrays handed out as views of a few larger ones, reused all at once (reset) once none of those
 * views is in use: the ranges of a window of a page (edge-gather.ts) are read into the same
 * few arrays each time rather than one new array each, ~135,000 of them for a page of every
 * city gathered at 140k cities.
 */
export class ByteArena {
  private readonly arrays: Uint8Array[] = [];
  private current = 0;
  private at = 0;

  constructor(private readonly grain = 256 * 1024) {}

  /** A view of `size` bytes, valid until reset(). */
  readonly take: Into = (size) => {
    for (;;) {
      let bytes = this.arrays[this.current];
      if (!bytes) this.arrays.push((bytes = new Uint8Array(Math.max(this.grain, size))));
      if (this.at + size <= bytes.length) return bytes.subarray(this.at, (this.at += size));
      [this.current, this.at] = [this.current + 1, 0];
    }
  };

  /** Every view handed out is let go: the arrays are taken again from their start. */
  reset(): void {
    [this.current, this.at] = [0, 0];
  }

  /** The bytes of the arrays held (for tests). */
  get bytes(): number {
    return this.arrays.reduce((sum, bytes) => sum + bytes.length, 0);
  }
}
