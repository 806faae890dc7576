import type { ServerResponse } from 'node:http';
import { AnswerCache } from './answer-cache.js';
import { answerListingRoute, listingETag, notModified } from './route.js';
import type { ApiRequest, ListingRoute, SiteContext } from './route-types.js';
import { send, sendBytes } from './send-answer.js';
import type { SendGate } from './send-gate.js';
import { pause } from './site-state.js';

/**
 * Sends a listing: from the answer cache when it holds it (compact JSON only), else computed at
 * once when that is quick, else once its long part (a multi-field order composed) is done in steps
 * between which other requests are answered (PageIndex.prepare); a whole compact answer is kept.
 */
export function sendListing(
  res: ServerResponse,
  req: ApiRequest,
  decision: ListingRoute,
  site: SiteContext,
  gate: SendGate | undefined,
  answers?: AnswerCache,
  seen = true,
): Promise<void> | void {
  const { negotiation } = decision;
  const cache =
    answers && 'renderer' in negotiation && negotiation.renderer === 'json' && negotiation.indent === null
      ? answers.owner(site.index, site.spec)
      : undefined;
  // The pairs' JSON is both the cache key and part of what the ETag hashes: made once.
  const key = cache && AnswerCache.key(decision.pairs, seen);
  const etag = listingETag(decision, site, seen, key);
  // A conditional request naming the answer's ETag: nothing computed.
  const unchanged = notModified(req, etag);
  if (unchanged) return send(res, 304, unchanged, undefined, gate);
  const kept = key === undefined ? undefined : cache!.get(key);
  if (kept) return sendBytes(res, kept.status, kept.head, kept.body, gate);
  const answer = () => {
    const { status, headers, body } = answerListingRoute(req, decision, site, () => etag);
    const whole = Array.isArray(body) && body.length === 1 ? (body[0] as Uint8Array) : body;
    if (key !== undefined && whole instanceof Uint8Array) cache!.offer(key, { status, headers, body: whole });
    send(res, status, headers, whole, gate);
  };
  const waiting = site.index.prepare?.(decision.pairs, pause);
  return waiting ? waiting.then(answer) : answer();
}
