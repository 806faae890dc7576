import type { Into } from './byte-pool.js';
import { corrupt, DEFLATED_HEADER, deflatedHead, HEADER_BYTES, isDeflated } from './edge-format.js';

// A block file as read whole (edge-blocks.ts), made plain: a deflated one (edge-format.ts: a large
// tie group's fine block of a site built for a host that reads files whole) inflated with the
// web-standard DecompressionStream, which workerd, Deno and Node alike provide, in zlib's format
// ('deflate', which all three take, as Node 20 does 'gzip' and 'deflate-raw'): 6 bytes over raw
// deflate for an Adler-32 of the bytes, 12 fewer than gzip's header and CRC. A plain one as it is. Its tag is checked before anything is inflated (a file of another build fails as a
// plain one does), and its bytes must inflate, with zlib's checksum, to exactly the length its
// header says: a corrupt or truncated file is an error naming it, never other cities.

/** The plain block of a block file read whole: `bytes` itself, or inflated into an array `into` gives (else a new one). */
export async function plainBlock(bytes: Uint8Array, tag: Uint8Array, path: string, into?: Into): Promise<Uint8Array> {
  if (!isDeflated(bytes)) return bytes;
  const { head, body } = deflatedHead(bytes, tag, path);
  const size = HEADER_BYTES + body;
  let inflated: Uint8Array;
  try {
    // Piped and collected by the runtime (no JS step per chunk): in workerd 0.17-0.19 ms of CPU per
    // 20 KB fine block, 0.7-0.8 ms per 240 KB one, where reading the chunks in JS took 0.30-0.35
    // and 2.3-2.5 ms (Node: the other way round, 0.75 against 0.54 ms per fine block).
    const stream = new Blob([bytes.subarray(DEFLATED_HEADER)]).stream().pipeThrough(new DecompressionStream('deflate'));
    inflated = new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (error) {
    throw corrupt(path, `its deflated cities do not inflate (${(error as Error)?.message ?? error})`);
  }
  if (inflated.length !== body)
    throw corrupt(path, `its cities inflate to ${inflated.length} bytes, not the ${body} its header says`);
  const out = (into ? into(size) : new Uint8Array(size)).subarray(0, size);
  out.set(head);
  out.set(inflated, HEADER_BYTES);
  return out;
}
