import { createWriteStream, writeFile as writeFileCallback } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import {
  brotliCompress,
  brotliCompressSync,
  constants as zlib,
  createBrotliCompress,
  createGzip,
  gzip,
  gzipSync,
  type BrotliOptions,
  type ZlibOptions,
} from 'node:zlib';
import type { FileStat } from '../fs/file-output.js';
import type { CompressionLevel } from '../site/spec.js';

// Each level's gzip and brotli settings, with a window no larger than the file.
// fast: gzip 6 and brotli 2: nearly the ratios of gzip's slowest setting, at a fraction of the CPU
// (measured on 140k-city pages: gzip 0.187 at 105 MB/s, brotli 0.173 at 146 MB/s), since a large
// site has 400,000 pages. best: gzip 9 and brotli 11, whose optimal parsing makes brotli about
// 28 % smaller on these pages for about 100 times the CPU (npm run bench:compression).
// A streamed body (a large page, size unknown) gets brotli's 256 KiB window, not its 4 MiB one:
// on 20 MB of city JSON quality 2 is even smaller with it (0.1402 vs 0.1420) and quality 11 1 %
// larger (0.0851 vs 0.0842, 24 % faster), and its state is megabytes smaller: freeing a 4 MiB one
// raised glibc's mmap threshold, so every malloc arena kept more free memory (peak RSS).

const LEVELS: Record<CompressionLevel, { readonly gzip: number; readonly brotli: number }> = {
  fast: { gzip: 6, brotli: 2 },
  best: { gzip: 9, brotli: 11 },
};

const STREAMED_LGWIN = 18;

const windowBits = (size: number, min: number, max: number) =>
  Math.min(max, Math.max(min, Math.ceil(Math.log2(Math.max(size, 1)))));

/** gzip settings at `level` for a file of `size` bytes (0: unknown, streamed). */
export const gzipOptions = (level: CompressionLevel, size: number): ZlibOptions => ({
  level: LEVELS[level].gzip,
  windowBits: size ? windowBits(size, 9, 15) : 15,
});

/** brotli settings at `level` for a file of `size` bytes (0: unknown, streamed). */
export const brotliOptions = (level: CompressionLevel, size: number): BrotliOptions => ({
  params: {
    [zlib.BROTLI_PARAM_QUALITY]: LEVELS[level].brotli,
    [zlib.BROTLI_PARAM_LGWIN]: size ? windowBits(size, 10, 22) : STREAMED_LGWIN,
    [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
    [zlib.BROTLI_PARAM_SIZE_HINT]: size,
  },
});

/** A page's `.gz` and `.br` at `level`, in that order. */
export function compressPage(page: Uint8Array, level: CompressionLevel): [Buffer, Buffer] {
  return [gzipSync(page, gzipOptions(level, page.length)), brotliCompressSync(page, brotliOptions(level, page.length))];
}

/** Bytes of a page's `.gz` and `.br` together at `level`, per byte of the page. */
export function compressedRatio(page: Uint8Array, level: CompressionLevel): number {
  if (!page.length) return 0;
  const [gz, br] = compressPage(page, level);
  return (gz.length + br.length) / page.length;
}

const writeFileAsync = promisify(writeFileCallback);
const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

export const VARIANTS = ['.gz', '.br'] as const;
export type Variant = (typeof VARIANTS)[number];

/** Writes the gzip or brotli form of a body, made at `level`, next to it. */
export async function writeCompressed(
  path: string,
  parts: Iterable<Uint8Array>,
  variant: Variant,
  level: CompressionLevel,
): Promise<FileStat> {
  const single = Array.isArray(parts) && parts.length === 1 ? (parts[0] as Uint8Array) : undefined;
  if (single) {
    const packed =
      variant === '.gz'
        ? await gzipAsync(single, gzipOptions(level, single.length))
        : await brotliAsync(single, brotliOptions(level, single.length));
    await writeFileAsync(path, packed, { flag: 'wx' });
  } else {
    const compressor =
      variant === '.gz' ? createGzip(gzipOptions(level, 0)) : createBrotliCompress(brotliOptions(level, 0));
    await pipeline(Readable.from(parts), compressor, createWriteStream(path, { flags: 'wx' }));
  }
  return lstat(path);
}
