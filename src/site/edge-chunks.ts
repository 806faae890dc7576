import { decodeChunk, MixedBuilds, type ChunkFile } from './edge-format.js';

// The cities of a page from the chunks holding them: each chunk read once per page (several at a
// time), the page's cities copied out, and recently read chunks kept up to a byte budget, so a
// page never holds more than its own cities and the chunks in flight.

export interface ChunkOptions {
  readonly cacheBytes?: number;
  readonly concurrency?: number;
}

export class ChunkReader {
  private readonly cache = new Map<number, { chunk: ChunkFile; bytes: number }>();
  private readonly inFlight = new Map<number, Promise<ChunkFile>>();
  private cached = 0;
  private readonly budget: number;
  private readonly concurrency: number;

  constructor(
    private readonly read: (path: string) => Promise<Uint8Array>,
    private readonly chunkCities: number,
    private readonly tag: Uint8Array,
    private readonly pathOf: (chunk: number) => string,
    options: ChunkOptions,
  ) {
    this.budget = options.cacheBytes ?? 24_000_000;
    this.concurrency = Math.max(1, options.concurrency ?? 6);
  }

  /** The serialized cities at these dataset positions, in their order (copies, not views of a chunk). */
  async cities(positions: Uint32Array): Promise<Uint8Array[]> {
    const wanted = new Map<number, number[]>();
    positions.forEach((position, i) => {
      const chunk = Math.floor(position / this.chunkCities);
      const list = wanted.get(chunk);
      if (list) list.push(i);
      else wanted.set(chunk, [i]);
    });
    const out = new Array<Uint8Array>(positions.length);
    const queue = [...wanted.keys()];
    const worker = async () => {
      for (let chunk = queue.shift(); chunk !== undefined; chunk = queue.shift()) {
        const file = await this.chunk(chunk);
        for (const i of wanted.get(chunk)!) {
          const at = positions[i]! - chunk * this.chunkCities;
          if (at >= file.count)
            throw new MixedBuilds(
              `${this.pathOf(chunk)} holds ${file.count} cities, not city ${at + 1}: deploy the site's files of one build together`,
            );
          out[i] = file.city(at).slice();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, queue.length) }, worker));
    return out;
  }

  private async chunk(n: number): Promise<ChunkFile> {
    const hit = this.cache.get(n);
    if (hit) {
      this.cache.delete(n);
      this.cache.set(n, hit);
      return hit.chunk;
    }
    let reading = this.inFlight.get(n);
    if (!reading) {
      const path = this.pathOf(n);
      reading = this.read(path).then((bytes) => {
        const chunk = decodeChunk(bytes, this.tag, path);
        this.keep(n, chunk, bytes.byteLength);
        return chunk;
      });
      this.inFlight.set(n, reading);
      reading.finally(() => this.inFlight.delete(n)).catch(() => undefined);
    }
    return reading;
  }

  private keep(n: number, chunk: ChunkFile, bytes: number): void {
    if (bytes > this.budget) return;
    this.cache.set(n, { chunk, bytes });
    this.cached += bytes;
    for (const [old, entry] of this.cache) {
      if (this.cached <= this.budget) break;
      this.cache.delete(old);
      this.cached -= entry.bytes;
    }
  }
}
