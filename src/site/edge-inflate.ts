import { CitiesApiError } from '../core/errors.js';
import type { Into } from './byte-pool.js';
import { corrupt, DEFLATED_HEADER, deflatedHead, HEADER_BYTES, isDeflated } from './edge-format.js';

// A block file as read whole (edge-blocks.ts), made plain: a deflated one (edge-format.ts: a large
// tie group's fine block of a site built for a host that reads files whole) inflated with the
// web-standard DecompressionStream, which workerd, Deno and Node alike provide (zlib's format,
// 'deflate': Node 20 takes 'deflate' and 'gzip', and 'deflate-raw' only from 21.2); a plain one
// as it is. Its tag is checked before anything is inflated (a file of another build fails as a
// plain one does), and its bytes must inflate, with zlib's checksum, to exactly the length its
// header says: a corrupt or truncated file is an error naming it, never other cities.

/** The plain block of a block file read whole: `bytes` itself, or inflated into an array `into` gives (else a new one). */
export async function plainBlock(bytes: Uint8Array, tag: Uint8Array, path: string, into?: Into): Promise<Uint8Array> {
  if (!isDeflated(bytes)) return bytes;
  const { head, body } = deflatedHead(bytes, tag, path);
  const size = HEADER_BYTES + body;
  const out = (into ? into(size) : new Uint8Array(size)).subarray(0, size);
  out.set(head);
  let at = HEADER_BYTES;
  try {
    const inflate = new DecompressionStream('deflate');
    const writer = inflate.writable.getWriter();
    // Their failures are the reader's to report (a corrupt stream errors both sides).
    writer.write(bytes.subarray(DEFLATED_HEADER)).catch(() => undefined);
    writer.close().catch(() => undefined);
    const reader = inflate.readable.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (at + value.length > size) {
        void reader.cancel().catch(() => undefined);
        throw corrupt(path, `its cities inflate to more than the ${body} bytes its header says`);
      }
      out.set(value, at);
      at += value.length;
    }
  } catch (error) {
    if (error instanceof CitiesApiError) throw error;
    throw corrupt(path, `its deflated cities do not inflate (${(error as Error)?.message ?? error})`);
  }
  if (at !== size)
    throw corrupt(path, `its cities inflate to ${at - HEADER_BYTES} bytes, not the ${body} its header says`);
  return out;
}
