import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, link, open, stat, utimes, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, createBrotliCompress, createGzip, gzip, type BrotliOptions, type ZlibOptions } from 'node:zlib';

// Writing one file of a site: its bytes (one buffer, or parts for large files so they are
// never assembled in memory), its hash, its precompressed siblings, or a link to an unchanged copy.

export type Body = string | Buffer | readonly Buffer[];

/** Bodies below this are assembled into one buffer (one hash update, one write); larger ones stream. */
const ASSEMBLE_BELOW = 1024 * 1024;
const IOV_MAX = 1024;
const GZIP: ZlibOptions = { level: 6 };
const brotli = (sizeHint: number): BrotliOptions => ({
  params: { [zlib.BROTLI_PARAM_QUALITY]: 4, [zlib.BROTLI_PARAM_LGWIN]: 18, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_SIZE_HINT]: sizeHint },
});

/** A body as buffers to write in order: one buffer unless it is large. */
export function partsOf(body: Body): Buffer[] {
  if (typeof body === 'string') return [Buffer.from(body)];
  if (Buffer.isBuffer(body)) return [body];
  const length = body.reduce((n, part) => n + part.length, 0);
  return length < ASSEMBLE_BELOW ? [Buffer.concat(body, length)] : [...body];
}

export function sha256(data: Body): string {
  const hash = createHash('sha256');
  if (typeof data === 'string' || Buffer.isBuffer(data)) hash.update(data);
  else for (const part of data) hash.update(part);
  return hash.digest('hex');
}

export async function writeParts(path: string, parts: readonly Buffer[]): Promise<void> {
  if (parts.length === 1) return writeFile(path, parts[0]!);
  const handle = await open(path, 'w');
  try {
    for (let i = 0; i < parts.length; i += IOV_MAX) await handle.writev(parts.slice(i, i + IOV_MAX));
  } finally {
    await handle.close();
  }
}

export const VARIANTS = ['.gz', '.br'] as const;
export type Variant = (typeof VARIANTS)[number];

/** Writes the gzip or brotli form of a body next to it. */
export async function writeCompressed(path: string, parts: readonly Buffer[], variant: Variant): Promise<void> {
  const size = parts.reduce((n, part) => n + part.length, 0);
  if (parts.length === 1) {
    const packed = variant === '.gz' ? await promisify(gzip)(parts[0]!, GZIP) : await promisify(brotliCompress)(parts[0]!, brotli(size));
    return writeFile(path, packed);
  }
  const compressor = variant === '.gz' ? createGzip(GZIP) : createBrotliCompress(brotli(size));
  await pipeline(Readable.from(parts), compressor, createWriteStream(path));
}

/**
 * Puts an unchanged file of the old tree into the new one as a hard link (a copy keeping its
 * mtime where links are impossible), so it is not rewritten. False when the old file is missing.
 */
export async function reuse(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK' && code !== 'ENOTSUP') throw error;
    const { atime, mtime } = await stat(from);
    await copyFile(from, to);
    await utimes(to, atime, mtime);
    return true;
  }
}
