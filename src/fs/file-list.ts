import { CitiesApiError } from '../core/errors.js';

// The files a build assembles (what the manifest lists), held compactly: a large site has
// hundreds of thousands, and an object of path -> hex hash costs about 200 bytes each (the key,
// a 64-character string, a dictionary slot), a Set of the compressed ones and a Map of the stat
// records' slots as much again. Here a file is its ordinal: the path (the one string kept),
// 32 bytes of hash in one buffer, one byte of flags.

const HASH = 32;
const BLOCK = 4096;

export class FileList {
  private readonly paths: string[] = [];
  private readonly hashes: Uint8Array[] = [];
  private readonly flags: Uint8Array[] = [];
  private order: Uint32Array | undefined;

  get size(): number {
    return this.paths.length;
  }

  /** Adds a file (its SHA-256 in hex; `compressed`: written with `.gz`/`.br`); returns its ordinal. */
  add(path: string, hash: string, compressed: boolean): number {
    const i = this.paths.length;
    if (i % BLOCK === 0) {
      this.hashes.push(new Uint8Array(BLOCK * HASH));
      this.flags.push(new Uint8Array(BLOCK));
    }
    this.paths.push(path);
    Buffer.from(this.hashes[(i / BLOCK) | 0]!.buffer).write(hash, (i % BLOCK) * HASH, HASH, 'hex');
    this.flags[(i / BLOCK) | 0]![i % BLOCK] = compressed ? 1 : 0;
    this.order = undefined;
    return i;
  }

  path(i: number): string {
    return this.paths[i]!;
  }

  /** Every path, by ordinal (the list itself: to be sent to another thread, not changed). */
  pathList(): readonly string[] {
    return this.paths;
  }

  /** The SHA-256 (hex) of the `i`th file. */
  hash(i: number): string {
    const at = (i % BLOCK) * HASH;
    return Buffer.from(this.hashes[(i / BLOCK) | 0]!.buffer, at, HASH).toString('hex');
  }

  /** The SHA-256 (hex) of `path`, or undefined when not listed. */
  hashOf(path: string): string | undefined {
    const i = this.find(path);
    return i < 0 ? undefined : this.hash(i);
  }

  /** Whether the `i`th file (-1: none) was written with `.gz`/`.br`. */
  compressed(i: number): boolean {
    return i >= 0 && this.flags[(i / BLOCK) | 0]![i % BLOCK] === 1;
  }

  /** Ordinals by path, in the manifest's order (UTF-16 code units); a path added twice is a bug, said so. */
  sorted(): Uint32Array {
    if (this.order) return this.order;
    const { paths } = this;
    const order = new Uint32Array(paths.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
    order.sort((a, b) => (paths[a]! < paths[b]! ? -1 : paths[a]! > paths[b]! ? 1 : 0));
    for (let i = 1; i < order.length; i++) {
      if (paths[order[i]!] === paths[order[i - 1]!])
        throw new CitiesApiError(`internal error: the site lists ${paths[order[i]!]} twice`);
    }
    return (this.order = order);
  }

  /** The ordinal of `path`, or -1. */
  find(path: string): number {
    const order = this.sorted();
    let lo = 0,
      hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.paths[order[mid]!]!;
      if (at === path) return order[mid]!;
      if (at < path) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }
}
