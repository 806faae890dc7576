import type { ServerResponse } from 'node:http';
import { releaseBytes } from '../core/bytes.js';
import { answerListing } from '../core/page.js';
import { AnswerCache } from './answer-cache.js';
import { holdLent } from './page-memory.js';
import type { Offered } from './route-memo.js';
import { answerListingRoute, listingETag, notModified } from './route.js';
import { jsonHeadList, jsonHeaders, type ApiRequest, type ListingRoute, type SiteContext } from './route-types.js';
import { send, sendBytes } from './send-answer.js';
import type { SendGate } from './send-gate.js';
import { pause } from './site-state.js';

/**
 * How often the route memo has seen a listing's target: `remembered` (its decision came from the
 * memo), else what the memo's offer() said of it (`first`, `again`; `never` where no memo keeps it).
 */
export type Sighting = Offered | 'remembered';

/**
 * Sends a listing: from the answer cache when it holds it (compact JSON only), else computed at
 * once when that is quick, else once its long part (a multi-field order composed) is done in steps
 * between which other requests are answered (PageIndex.prepare); a whole compact answer is kept
 * the second time it is computed.
 *
 * A target's first time (`first`) does not touch the cache: nothing of it is kept, and the one
 * answer this can miss (another spelling of the same pairs, kept) is computed instead. Its
 * second time (`again`) the answer is kept at once: it was computed the first time.
 */
export function sendListing(
  res: ServerResponse,
  req: ApiRequest,
  decision: ListingRoute,
  site: SiteContext,
  gate: SendGate | undefined,
  answers?: AnswerCache,
  sighting: Sighting = 'remembered',
): Promise<void> | void {
  const { negotiation } = decision;
  const compact = 'renderer' in negotiation && negotiation.renderer === 'json' && negotiation.indent === null;
  const cache = answers && compact && sighting !== 'first' ? answers.owner(site.index, site.spec) : undefined;
  // The memo holds the decision: its ETag and key are kept by its pairs, made once.
  const remember = sighting === 'remembered' || sighting === 'again';
  const key = cache && AnswerCache.key(decision.pairs, remember);
  const etag = listingETag(decision, site, remember);
  // A conditional request naming the answer's ETag: nothing computed.
  const unchanged = notModified(req, etag);
  if (unchanged) return send(res, 304, unchanged, undefined, gate);
  const kept = key === undefined ? undefined : cache!.get(key);
  if (kept) return sendBytes(res, kept.status, kept.head, kept.body, gate);
  const computed: Computed = { res, req, decision, site, gate, etag, compact, cache, key, again: sighting === 'again' };
  const waiting = site.index.prepare?.(decision.pairs, pause);
  return waiting ? waiting.then(() => sendComputed(computed)) : sendComputed(computed);
}

/** What sending a computed listing takes (one object, not a closure made per request). */
interface Computed {
  readonly res: ServerResponse;
  readonly req: ApiRequest;
  readonly decision: ListingRoute;
  readonly site: SiteContext;
  readonly gate: SendGate | undefined;
  readonly etag: string | undefined;
  readonly compact: boolean;
  readonly cache: AnswerCache | undefined;
  readonly key: string | undefined;
  /** The target's second time: its answer is kept at once. */
  readonly again: boolean;
}

function sendComputed({ res, req, decision, site, gate, etag, compact, cache, key, again }: Computed): void {
  if (!compact) {
    const { status, headers, body } = answerListingRoute(req, decision, site, () => etag);
    return send(res, status, headers, body, gate);
  }
  // Compact JSON is the page function's bytes as they are, with jsonHeaders() (what answerListingRoute
  // gives it) made straight as the header list, no header object between.
  // Sent at once, and read no more: the page may be lent from the memory it is assembled in (page-memory.ts).
  // Not to a response queued behind another on its connection (no send gate): node never closes one whose connection closed first.
  const { status, body } = answerListing(site.index, decision.pairs, site.spec.baseUrl, res.socket !== null);
  const tag = status === 200 ? etag : undefined;
  const whole = Array.isArray(body) && body.length === 1 ? (body[0] as Uint8Array) : undefined;
  if (!whole) return send(res, status, jsonHeaders(tag), body, gate);
  const head = jsonHeadList(tag, whole.length);
  if (key !== undefined) cache!.offer(key, { status, head, body: whole }, again);
  sendBytes(res, status, head, whole, gate);
  // Handed to the kernel whole (nothing queued in node) and kept by nobody (the cache keeps a copy): its memory is reused.
  if (res.writableFinished) releaseBytes(whole);
  else holdLent(site.index, whole, res);
}
