import type { Negotiation } from '../core/negotiate.js';
import { plainPairs, type QueryPair } from '../core/query-string.js';
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
  pairsJson?: string,
): string | undefined {
  if (!('renderer' in negotiation) || negotiation.renderer !== 'json') return undefined;
  // The hash of JSON.stringify([dataTag, count, baseUrl, defaultPageSize, indent, pairs]); the
  // pairs' JSON hashed as given (an answer cache's key is the same text), else as it is written.
  const head = headOf(spec, dataTag, negotiation.indent);
  return pairsJson === undefined ? hashPairs(head, pairs) : hash128(head, pairsJson);
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
 * Four 32-bit MurmurHash3-style lanes over the UTF-16 code units of `${head},${pairsJson}]` (pure,
 * synchronous, the same on every runtime), as the tag `W/"c…"` of 32 hex digits. The lanes are
 * independent, computed side by side in one pass; the text is never made, only its parts read in turn.
 */
function hash128(head: string, pairsJson: string): string {
  const lanes = afterHead(head, head.length + pairsJson.length + 2);
  mix(lanes, [pairsJson, ']']);
  return digest(lanes);
}

/** hash128(head, JSON.stringify(pairs)), the pairs' JSON read part by part, never made whole. */
function hashPairs(head: string, pairs: readonly QueryPair[]): string {
  // Its length first (the lanes start from it): `${head},[` and `]]`, each pair's `["name","value"]`, commas between.
  let length = head.length + 4 + Math.max(0, pairs.length - 1);
  const checked = plainPairs(pairs);
  for (const [name, value] of pairs) {
    if (!checked && (!plain(name) || !plain(value))) return hash128(head, JSON.stringify(pairs)); // escapes: as JSON writes them
    length += 7 + name.length + value.length;
  }
  const lanes = afterHead(head, length);
  // The JSON's pieces, mixed in one call (a call per piece cost more than its few characters).
  const texts = ['['];
  for (let i = 0; i < pairs.length; i++) texts.push(i ? ',["' : '["', pairs[i]![0], '","', pairs[i]![1], '"]');
  texts.push(']]');
  mix(lanes, texts);
  return digest(lanes);
}

/** Whether JSON.stringify writes `text` as it is between its quotes: no `"`, `\`, control character or surrogate. */
function plain(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/**
 * The lanes after `${head},` for a text of `length` units (they start from it): kept for the last
 * head, by length, so that a server's requests hash only their own pairs (a few hundred lengths).
 */
let keptHead: string | undefined;
const byLength = new Map<number, Int32Array>();

function afterHead(head: string, length: number): Int32Array {
  if (head !== keptHead || byLength.size >= 256) {
    keptHead = head;
    byLength.clear();
  }
  let kept = byLength.get(length);
  if (!kept) {
    kept = Int32Array.of(0x9747b28c ^ length, 0x85ebca6b ^ length, 0xc2b2ae35 ^ length, 0x27d4eb2f ^ length);
    mix(kept, [head, ',']);
    byLength.set(length, kept);
  }
  LANES.set(kept);
  return LANES;
}

/** The lanes a hash is computed in (afterHead's copy of the kept ones): hashing is synchronous, one at a time. */
const LANES = new Int32Array(4);

/** The code units of the texts, one after another, mixed into the four lanes. */
function mix(lanes: Int32Array, texts: readonly string[]): void {
  let a = lanes[0]!;
  let b = lanes[1]!;
  let c = lanes[2]!;
  let d = lanes[3]!;
  for (const text of texts)
    for (let i = 0; i < text.length; i++) {
      let k = Math.imul(text.charCodeAt(i), 0xcc9e2d51);
      k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
      a ^= k;
      a = (Math.imul((a << 13) | (a >>> 19), 5) + 0xe6546b64) | 0;
      b ^= k;
      b = (Math.imul((b << 13) | (b >>> 19), 5) + 0xe6546b64) | 0;
      c ^= k;
      c = (Math.imul((c << 13) | (c >>> 19), 5) + 0xe6546b64) | 0;
      d ^= k;
      d = (Math.imul((d << 13) | (d >>> 19), 5) + 0xe6546b64) | 0;
    }
  lanes[0] = a;
  lanes[1] = b;
  lanes[2] = c;
  lanes[3] = d;
}

/** The tag `W/"c` + the four lanes finished, as 32 hex digits + `"`, made by one call (it was 4 calls and 5 joins). */
function digest(lanes: Int32Array): string {
  const a = finish(lanes[0]!);
  const b = finish(lanes[1]!);
  const c = finish(lanes[2]!);
  const d = finish(lanes[3]!);
  const hex = (h: number, shift: number) => HEX[(h >>> shift) & 15]!;
  // biome-ignore format: a row per lane
  return String.fromCharCode(
    W, SLASH, QUOTE, C,
    hex(a, 28), hex(a, 24), hex(a, 20), hex(a, 16), hex(a, 12), hex(a, 8), hex(a, 4), hex(a, 0),
    hex(b, 28), hex(b, 24), hex(b, 20), hex(b, 16), hex(b, 12), hex(b, 8), hex(b, 4), hex(b, 0),
    hex(c, 28), hex(c, 24), hex(c, 20), hex(c, 16), hex(c, 12), hex(c, 8), hex(c, 4), hex(c, 0),
    hex(d, 28), hex(d, 24), hex(d, 20), hex(d, 16), hex(d, 12), hex(d, 8), hex(d, 4), hex(d, 0),
    QUOTE,
  );
}

/** The character codes of the hex digits, and of the tag's other characters. */
const HEX = Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0));
const [W, SLASH, QUOTE, C] = Array.from('W/"c', (char) => char.charCodeAt(0)) as [number, number, number, number];

function finish(lane: number): number {
  let h = lane ^ (lane >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
