import { utf8, type Bytes } from '../core/bytes.js';
import { envelopeHead } from '../core/json-text.js';
import { listingFrame } from '../core/page.js';
import type { SiteSpec } from '../site/spec.js';
import { jsonHeaders, type LazySiteContext, type ListingRoute } from './route-types.js';

// A covered query's page sent from the site's own file, where the platform streams an opened file
// with no JavaScript array per part (self-hosted Deno pipes it in Rust): a computed page of every city
// leaves 70 MB of dead 64 KiB parts to V8's young collections, a file's stream none (docs/deno.md).
// The answer is the computed one's (status, headers, ETag), its bytes the file's, which are the
// computed page's when the file is of the build the ETag names: builds are deterministic, and a
// rebuild writes a new tree (never a file in place), so a file held open keeps its bytes. A file that
// cannot be had as that build's is not sent (closed): the page is computed, as without this path.

/** A site file opened by the platform (platforms/deno/page-files.ts). */
export interface PageFile {
  /** Its first `length` bytes (fewer where it is shorter), read before `readable`, which starts at the file's start. */
  head(length: number): Promise<Bytes>;
  /** The file's bytes as the platform streams them, read once; the file is closed when it ends or is cancelled. */
  readable(): ReadableStream<Uint8Array>;
  close(): void;
}

/** Opens a site file by its path in the site (`cities/...`) as a file of the build `tag` names: null or a rejection where it cannot be sent. */
export type OpenPageFile = (path: string, tag: string) => Promise<PageFile | null>;

/** How long a page file's open, then its head, may take before the page is computed instead (a FIFO, a hung mount). */
export const PAGE_FILE_MS = 2_000;

/**
 * The 200 of a covered GET (`path`: its file) with the file's bytes, or null (nothing left open)
 * where the file is missing, refused by the platform, of other settings or data (its envelope's
 * count and links are not this answer's), or the site was rebuilt with other data since `tag`.
 */
export async function pageFileAnswer(
  open: OpenPageFile,
  path: string,
  listing: Pick<ListingRoute, 'pairs'>,
  spec: SiteSpec,
  site: LazySiteContext,
  tag: string,
  etag: string,
): Promise<Response | null> {
  const frame = listingFrame(spec.count, listing.pairs, spec.baseUrl);
  // A file opened too late is closed as it comes.
  const file = frame && (await inTime(open(path, tag), (late) => late?.close()).catch(() => null));
  if (!frame || !file) return null;
  try {
    const head = utf8(envelopeHead(spec.count, frame.next, frame.previous));
    // The envelope says the file is of this count and these links (base URL, page sizes); the tag
    // read again once the file is open (the index's inode and mtime looked at, its file read again
    // where they changed), that the site still holds the data `tag` names.
    if (sameBytes(await inTime(file.head(head.length)), head) && (await site.tag?.()) === tag)
      return new Response(file.readable(), { status: 200, headers: jsonHeaders(etag) });
  } catch {
    // A read or the index failed, or took too long: computed instead.
  }
  file.close();
  return null;
}

/** `work`'s value, or a rejection after PAGE_FILE_MS (its value then handed to `late`). */
function inTime<T>(work: Promise<T>, late?: (value: T) => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let over = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      over = true;
      reject(new Error(`no answer in ${PAGE_FILE_MS} ms`));
    }, PAGE_FILE_MS);
  });
  if (late) work.then((value) => over && late(value)).catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function sameBytes(a: Bytes, b: Bytes): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
