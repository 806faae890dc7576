import { ROUTES } from '../core/route-table.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { detailJson } from '../core/json-text.js';
import { decideRoute } from './route.js';
import type { ApiRequest, SiteContext } from './route-types.js';
import { originForm } from '../core/url-path.js';
import { RouteMemo } from './route-memo.js';
import { joinedHeader } from './raw-headers.js';
import { AnswerCache } from './answer-cache.js';
import { create, type CreateOptions } from './create-answer.js';
import { IF_NONE_MATCH, sendFile } from './send-file.js';
import { sendListing, type Sighting } from './send-listing.js';
import { send } from './send-answer.js';
import type { LoadedSite } from './site-state.js';

/** A CORS preflight's request headers, as node:http names them (lower case). */
const REQUEST_METHOD = ROUTES.header.requestMethod.toLowerCase();
const REQUEST_HEADERS = ROUTES.header.requestHeaders.toLowerCase();
const ACCEPT = ROUTES.header.accept.toLowerCase();

export interface HandlerOptions extends CreateOptions {
  /** The site to answer from now (it changes after a rebuild). */
  readonly site: () => LoadedSite;
  /** Told about each response that streams a site file, until it finishes. */
  readonly track?: (res: ServerResponse) => void;
  readonly onError?: (error: unknown) => void;
  /** Also answer the site's file paths (`serve --failover-origin`). */
  readonly filePaths?: boolean;
  /** Bytes of computed answers kept (answer-cache.ts); none without. */
  readonly answerCacheBytes?: number | undefined;
}

/** A request handler, and a way to forget what it kept (see createHandler). */
export type Handler = ((req: IncomingMessage, res: ServerResponse) => void) & {
  /** Forgets its route decisions and computed answers: what it answers next is as from a new handler (serve's warm-up's, before clients). */
  forget(): void;
};

/**
 * The HTTP request handler: routes each request (decisions remembered per site), sends static files
 * (send-file.ts), computes listings (send-listing.ts) and creates cities (create-answer.ts).
 */
export function createHandler(options: HandlerOptions): Handler {
  const fail = (res: ServerResponse, error: unknown) => {
    options.onError?.(error);
    if (!res.headersSent)
      send(
        res,
        500,
        { [ROUTES.header.contentType]: ROUTES.contentType.json },
        Buffer.from(detailJson('A server error occurred.')),
      );
    else res.destroy();
  };
  // Routing decisions of the site answered now; a new site (or files unused) starts afresh.
  let memoFor: SiteContext | undefined;
  let memo = new RouteMemo();
  const memoOf = (site: LoadedSite): RouteMemo | undefined => {
    if (site.context.useFiles === false) return undefined;
    if (site.context !== memoFor) [memoFor, memo] = [site.context, new RouteMemo()];
    return memo;
  };
  const answers = options.answerCacheBytes ? new AnswerCache(options.answerCacheBytes) : undefined;
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    try {
      const site = options.site();
      const pending = handle(req, res, site, options, memoOf, answers, fail)?.catch((error) => fail(res, error));
      // Not over yet (computed later, or still being sent): its site's memory is reused by no load meanwhile.
      if (pending || !res.writableFinished) site.lease?.hold(res, pending);
    } catch (error) {
      fail(res, error);
    }
  };
  const { gate } = options;
  const handler = gate
    ? (req: IncomingMessage, res: ServerResponse) => gate.admit(res, () => answer(req, res))
    : answer;
  const forget = () => {
    memoFor = undefined;
    answers?.forget();
  };
  return Object.assign(handler, { forget });
}

/** Answers synchronously when it can (the hot paths); returns a promise when it must wait. */
function handle(
  req: IncomingMessage,
  res: ServerResponse,
  site: LoadedSite,
  options: HandlerOptions,
  memoOf: (site: LoadedSite) => RouteMemo | undefined,
  answers: AnswerCache | undefined,
  fail: (res: ServerResponse, error: unknown) => void,
): Promise<void> | void {
  const method = req.method ?? 'GET';
  const target = req.url ?? '/';
  const accept = joinedHeader(req, ACCEPT);
  // GET and HEAD decisions depend on the method, target and Accept only (see decideRoute()).
  const memo = method === 'GET' || method === 'HEAD' ? memoOf(site) : undefined;
  let apiRequest: ApiRequest | undefined;
  const request = (): ApiRequest =>
    (apiRequest ??= {
      method,
      target: originForm(target),
      accept,
      preflightHeaders:
        method === 'OPTIONS' && req.headers[REQUEST_METHOD] !== undefined
          ? ((req.headers[REQUEST_HEADERS] as string | undefined) ?? '')
          : undefined,
      writable: options.writer !== undefined && options.token !== undefined,
      ifNoneMatch: joinedHeader(req, IF_NONE_MATCH),
    });
  let decision = memo?.get(method, accept, target);
  // How often the memo has seen this target: what the answer cache and the ETag memo make of it (send-listing.ts).
  let sighting: Sighting = decision ? 'remembered' : 'never';
  if (!decision) {
    const decided = decideRoute(request(), site.context, options.filePaths);
    if (decided.kind === 'answer') return send(res, decided.status, decided.headers, decided.body, options.gate);
    if (decided.kind === 'create') return create(req, res, options, request(), decided);
    if (memo) sighting = memo.offer(method, accept, target, decided);
    decision = decided;
  }
  if (decision.kind === 'listing')
    return sendListing(res, request(), decision, site.context, options.gate, answers, sighting);
  // A file the site should hold but that is missing or unreadable: the answer is computed instead.
  const live = () => {
    try {
      const context = { ...site.context, useFiles: false };
      const answer = decideRoute(request(), context, options.filePaths);
      if (answer.kind === 'listing') {
        const pending = sendListing(res, request(), answer, context, options.gate, answers, 'never');
        // Called once the handler returned (sirv's fallback): held here until computed, then sent.
        if (pending)
          site.lease?.hold(
            res,
            pending.catch((error) => fail(res, error)),
          );
        return;
      }
      if (answer.kind !== 'answer') throw new Error(`${method} ${target} has no live answer`);
      send(res, answer.status, answer.headers, answer.body, options.gate);
    } catch (error) {
      fail(res, error);
    }
  };
  const found = site.cache.get(decision.file, req.headers['accept-encoding']);
  if (found instanceof Promise) return found.then((entry) => sendFile(req, res, decision, entry, site, options, live));
  return sendFile(req, res, decision, found, site, options, live);
}
