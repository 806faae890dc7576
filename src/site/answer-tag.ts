import type { Negotiation } from '../core/negotiate.js';
import type { QueryPair } from '../core/query-string.js';
import type { SiteSpec } from './spec.js';

// The ETag of a computed JSON answer, the same wherever it is computed (`cities-api serve`, every
// edge function): a name for what the answer's bytes follow from, not a hash of the bytes, so it
// is known before the page is read (a conditional request costs no read, a page is streamed after
// its headers). What they follow from: the data (the edge index's tag: cities, collation, ICU's
// data; and the number of cities, which appended cities change), the settings a page is written
// with (base URL, default page size), the JSON form (compact or its indent) and the query pairs as
// sent. Two requests with one tag get the same bytes; the same bytes may have two tags (`page=2`,
// `page=02`), which only costs a full answer. The browsable page (it shows the request) gets none.

/** `W/"c…"`: weak (the bytes are equal, but hosts may compress them), `c` for computed (a file's ETag is the host's). */
export function answerETag(
  spec: Pick<SiteSpec, 'baseUrl' | 'defaultPageSize' | 'count'>,
  dataTag: string,
  negotiation: Negotiation,
  pairs: readonly QueryPair[],
  pairsJson: string = JSON.stringify(pairs),
): string | undefined {
  if (!('renderer' in negotiation) || negotiation.renderer !== 'json') return undefined;
  // JSON.stringify([dataTag, count, baseUrl, defaultPageSize, indent, pairs]), the pairs' JSON given (an answer cache's key is the same text).
  return `W/"c${hash128(`${headOf(spec, dataTag, negotiation.indent)},${pairsJson}]`)}"`;
}

/** The last head made, and what it was made of: a server asks for the same site's, request after request. */
let lastHead:
  | { dataTag: string; count: number; baseUrl: string; defaultPageSize: number; indent: number | null; text: string }
  | undefined;

/** `[dataTag, count, baseUrl, defaultPageSize, indent` (a JSON array, its end left open). */
function headOf(spec: Pick<SiteSpec, 'baseUrl' | 'defaultPageSize' | 'count'>, dataTag: string, indent: number | null) {
  const { count, baseUrl, defaultPageSize } = spec;
  const last = lastHead;
  if (
    last?.dataTag === dataTag &&
    last.count === count &&
    last.baseUrl === baseUrl &&
    last.defaultPageSize === defaultPageSize &&
    last.indent === indent
  )
    return last.text;
  const text = JSON.stringify([dataTag, count, baseUrl, defaultPageSize, indent]).slice(0, -1);
  lastHead = { dataTag, count, baseUrl, defaultPageSize, indent, text };
  return text;
}

/**
 * Whether an If-None-Match field names `etag` (weak comparison, as RFC 9110 asks for GET and
 * HEAD). `*` is not honoured: it would also match an answer that is not a 200.
 */
export function matchesETag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const part of ifNoneMatch.split(',')) {
    const candidate = part.trim();
    if ((candidate.startsWith('W/') ? candidate.slice(2) : candidate) === opaque) return true;
  }
  return false;
}

/**
 * Four 32-bit MurmurHash3-style lanes over the UTF-16 code units (pure, synchronous, the same on
 * every runtime): 32 hex digits. The lanes are independent, computed side by side in one pass.
 */
function hash128(text: string): string {
  let a = 0x9747b28c ^ text.length;
  let b = 0x85ebca6b ^ text.length;
  let c = 0xc2b2ae35 ^ text.length;
  let d = 0x27d4eb2f ^ text.length;
  for (let i = 0; i < text.length; i++) {
    let k = Math.imul(text.charCodeAt(i), 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    a ^= k;
    a = Math.imul((a << 13) | (a >>> 19), 5) + 0xe6546b64;
    b ^= k;
    b = Math.imul((b << 13) | (b >>> 19), 5) + 0xe6546b64;
    c ^= k;
    c = Math.imul((c << 13) | (c >>> 19), 5) + 0xe6546b64;
    d ^= k;
    d = Math.imul((d << 13) | (d >>> 19), 5) + 0xe6546b64;
  }
  return `${finish(a)}${finish(b)}${finish(c)}${finish(d)}`;
}

/** Two hex digits for each byte value. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

function finish(lane: number): string {
  let h = lane ^ (lane >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return HEX[h >>> 24]! + HEX[(h >>> 16) & 0xff]! + HEX[(h >>> 8) & 0xff]! + HEX[h & 0xff]!;
}
