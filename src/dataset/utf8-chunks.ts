import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';

const CHUNK_BYTES = 256 * 1024;

/** The first byte of a dataset file that is not UTF-8: its offset, value and line. */
export class InvalidUtf8 extends Error {
  constructor(
    readonly offset: number,
    readonly byte: number,
    readonly line: number,
  ) {
    super('invalid UTF-8');
  }
}

/** The file's chunks, checked to be UTF-8 on the way (InvalidUtf8 names the first bad byte). */
export async function* utf8Chunks(
  file: string,
  onChunk: (bytesRead: number, chunk: Buffer) => void,
): AsyncGenerator<Buffer> {
  let carry = Buffer.alloc(0);
  // File offset and line of carry's first byte (everything before it is checked).
  let offset = 0;
  let line = 1;
  for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
    // A multi-byte character may straddle chunks: check up to the last complete one, carry the rest.
    const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const complete = bytes.length - incompleteTail(bytes);
    if (!isUtf8(bytes.subarray(0, complete))) throw invalidUtf8(bytes, offset, line);
    line += countNewlines(bytes.subarray(0, complete));
    offset += complete;
    carry = Buffer.from(bytes.subarray(complete));
    onChunk(offset + carry.length, chunk);
    yield chunk;
  }
  if (carry.length) throw invalidUtf8(carry, offset, line);
}

/** How many bytes at the end of `bytes` begin a UTF-8 sequence that is not finished yet (0-3). */
function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) !== 0x80) {
      const need = b >= 0xf8 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      return need > back ? back : 0;
    }
  }
  return 0;
}

function countNewlines(bytes: Buffer): number {
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
  return n;
}

/** Locates the first invalid byte in `bytes`, which start at file offset `offset`, on line `line`. */
function invalidUtf8(bytes: Buffer, offset: number, line: number): InvalidUtf8 {
  let lo = 0,
    hi = bytes.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const prefix = bytes.subarray(0, mid);
    if (isUtf8(prefix.subarray(0, prefix.length - incompleteTail(prefix)))) lo = mid;
    else hi = mid;
  }
  // The first `lo` bytes pass, but they may end with the lead of a sequence the next byte breaks
  // (Latin-1 "é" before a space): the bad byte is that lead, not the byte after it.
  const bad = lo - incompleteTail(bytes.subarray(0, lo));
  return new InvalidUtf8(offset + bad, bytes[bad]!, line + countNewlines(bytes.subarray(0, bad)));
}
