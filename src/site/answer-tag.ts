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
): string | undefined {
  if (!('renderer' in negotiation) || negotiation.renderer !== 'json') return undefined;
  // The hash of JSON.stringify([dataTag, count, baseUrl, defaultPageSize, indent]), then of the
  // pairs: their number, each name and value after its length (no two lists of pairs read alike).
  let at = afterHead(headOf(spec, dataTag, negotiation.indent));
  at = mixUnit(at, pairs.length);
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!;
    at = mixText(mixUnit(at, pair[0].length), pair[0]);
    at = mixText(mixUnit(at, pair[1].length), pair[1]);
  }
  return digest(at);
}

/** The last head made, and what it was made of: a server asks for the same site's, request after request. */
let lastHead:
  | { dataTag: string; count: number; baseUrl: string; defaultPageSize: number; indent: number | null; text: string }
  | undefined;

/** JSON.stringify([dataTag, count, baseUrl, defaultPageSize, indent]). */
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
  const text = JSON.stringify([dataTag, count, baseUrl, defaultPageSize, indent]);
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
 * Four 32-bit FNV-1a lanes over a sequence of 16-bit units (UTF-16 code units and lengths), unit
 * `i` mixed into lane `i % 4` (pure, synchronous, the same on every runtime), then the lanes mixed
 * together and finished as MurmurHash3 finishes, as the tag `W/"c…"` of 32 hex digits. The lanes
 * after the head are kept for the last head: a server's requests hash only their own pairs.
 */
let keptHead: string | undefined;
const KEPT = new Int32Array(4);
let keptAt = 0;
/** The lanes a hash is computed in: hashing is synchronous, one at a time. */
const LANES = new Int32Array(4);

/** The lanes (LANES) after `head`; returns how many units they have mixed. */
function afterHead(head: string): number {
  if (head !== keptHead) {
    LANES[0] = 0x9747b28c;
    LANES[1] = 0x85ebca6b;
    LANES[2] = 0xc2b2ae35;
    LANES[3] = 0x27d4eb2f;
    keptAt = mixText(0, head);
    KEPT.set(LANES);
    keptHead = head;
    return keptAt;
  }
  LANES[0] = KEPT[0]!;
  LANES[1] = KEPT[1]!;
  LANES[2] = KEPT[2]!;
  LANES[3] = KEPT[3]!;
  return keptAt;
}

/** `text`'s code units mixed in, the first as unit `at`; returns the units mixed so far. */
function mixText(at: number, text: string): number {
  for (let i = 0; i < text.length; i++) at = mixUnit(at, text.charCodeAt(i));
  return at;
}

/** Unit `at` (`unit`) mixed into its lane (an FNV-1a step: digest() mixes the lanes well); returns at + 1. */
function mixUnit(at: number, unit: number): number {
  const lane = at & 3;
  LANES[lane] = Math.imul(LANES[lane]! ^ unit, 0x01000193);
  return at + 1;
}

/** The tag `W/"c` + the lanes, after `units` units, mixed together and finished as 32 hex digits + `"`, made by one call. */
function digest(units: number): string {
  let a = LANES[0]! ^ units;
  let b = LANES[1]! ^ units;
  let c = LANES[2]! ^ units;
  let d = LANES[3]! ^ units;
  // As MurmurHash3's x86_128 ends: each lane made to depend on all four.
  a = (a + b + c + d) | 0;
  b = (b + a) | 0;
  c = (c + a) | 0;
  d = (d + a) | 0;
  a = finish(a);
  b = finish(b);
  c = finish(c);
  d = finish(d);
  a = (a + b + c + d) | 0;
  b = (b + a) | 0;
  c = (c + a) | 0;
  d = (d + a) | 0;
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
  return h ^ (h >>> 16);
}
