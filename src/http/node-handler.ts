import { ROUTES } from '../core/route-table.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { City } from '../core/fields.js';
import { CreateRefused, type CityStore } from '../post/city-store.js';
import { validateNewCity } from '../post/create-city.js';
import { detailJson, cityJson } from '../core/json-text.js';
import type { Negotiation } from '../core/negotiate.js';
import { readBody } from './request-body.js';
import { bodyBytes } from '../core/page.js';
import { rawResponse } from './raw-answer.js';
import { answerListingRoute, listingETag, notModified, decideRoute, READ_ONLY_DETAIL, route } from './route.js';
import {
  JSON_HEADERS,
  type ApiRequest,
  type ListingRoute,
  type HeaderFields,
  type Route,
  type SiteContext,
  type StaticRoute,
} from './route-types.js';
import { badRequest, render } from './render.js';
import { originForm } from '../core/url-path.js';
import { RouteMemo } from './route-memo.js';
import { matchesETag } from '../site/answer-tag.js';
import { AnswerCache } from './answer-cache.js';
import type { FileLookup } from './file-cache.js';
import type { SendGate } from './send-gate.js';
import { RelayResponse } from './sirv-response.js';
import { headList, send, sendBytes } from './send-answer.js';

/** A CORS preflight's request headers, as node:http names them (lower case). */
const REQUEST_METHOD = ROUTES.header.requestMethod.toLowerCase();
const REQUEST_HEADERS = ROUTES.header.requestHeaders.toLowerCase();
/** node:http joins repeated If-None-Match fields into one string. */
const IF_NONE_MATCH = ROUTES.header.ifNoneMatch.toLowerCase();
/** What a file stream reads at a time (fs.createReadStream's default highWaterMark). */
const FILE_CHUNK_BYTES = 64 * 1024;
import { DEFAULT_LIMITS } from './limits.js';
import { pause, type LoadedSite } from './site-state.js';
import { checkToken } from './token-auth.js';

export interface HandlerOptions {
  /** The site to answer from now (it changes after a rebuild). */
  readonly site: () => LoadedSite;
  /** Told about each response that streams a site file, until it finishes. */
  readonly track?: (res: ServerResponse) => void;
  /** Set when POST may create cities (`--writable`), with the token clients must send. */
  readonly writer?: CityStore | undefined;
  readonly token?: string | undefined;
  /** Longest pause within a POST body (ms). */
  readonly bodyTimeout?: number;
  /** Decides when each answer may be computed (see send-gate.ts); without one, at once. */
  readonly gate?: SendGate;
  readonly onError?: (error: unknown) => void;
  /** Also answer the site's file paths (`serve --failover-origin`). */
  readonly filePaths?: boolean;
  /** Bytes of computed answers kept (answer-cache.ts); none without. */
  readonly answerCacheBytes?: number | undefined;
}

/** The HTTP request handler: routes each request, sends static files through sirv, computes the rest. */
export function createHandler(options: HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
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
      handle(req, res, options, memoOf, answers, fail)?.catch((error) => fail(res, error));
    } catch (error) {
      fail(res, error);
    }
  };
  const { gate } = options;
  return gate ? (req, res) => gate.admit(res, () => answer(req, res)) : answer;
}

/** Answers synchronously when it can (the hot paths); returns a promise when it must wait. */
function handle(
  req: IncomingMessage,
  res: ServerResponse,
  options: HandlerOptions,
  memoOf: (site: LoadedSite) => RouteMemo | undefined,
  answers: AnswerCache | undefined,
  fail: (res: ServerResponse, error: unknown) => void,
): Promise<void> | void {
  const site = options.site();
  const method = req.method ?? 'GET';
  const target = req.url ?? '/';
  const accept = req.headers.accept;
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
      ifNoneMatch: req.headers[IF_NONE_MATCH] as string | undefined,
    });
  let decision = memo?.get(method, accept, target);
  // Whether this decision was seen before (from the memo): only then are its ETag and cache key kept by it.
  const seen = decision !== undefined;
  if (!decision) {
    const decided = decideRoute(request(), site.context, options.filePaths);
    if (decided.kind === 'answer') return send(res, decided.status, decided.headers, decided.body, options.gate);
    if (decided.kind === 'create') return create(req, res, options, request(), decided);
    memo?.set(method, accept, target, decided);
    decision = decided;
  }
  if (decision.kind === 'listing')
    return sendListing(res, request(), decision, site.context, options.gate, answers, seen);
  // A file the site should hold but that is missing or unreadable: the answer is computed instead.
  const live = () => {
    try {
      const context = { ...site.context, useFiles: false };
      const answer = decideRoute(request(), context, options.filePaths);
      if (answer.kind === 'listing')
        return void sendListing(res, request(), answer, context, options.gate, answers, false)?.catch((error) =>
          fail(res, error),
        );
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

/**
 * Sends a listing: from the answer cache when it holds it (compact JSON only), else computed at
 * once when that is quick, else once its long part (a multi-field order composed) is done in steps
 * between which other requests are answered (PageIndex.prepare); a whole compact answer is kept.
 */
function sendListing(
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
  if (kept) return sendBytes(res, kept.status, headList(kept.headers, kept.body.length), kept.body, gate);
  const answer = () => {
    const { status, headers, body } = answerListingRoute(req, decision, site, () => etag);
    const whole = Array.isArray(body) && body.length === 1 ? (body[0] as Uint8Array) : body;
    if (key !== undefined && whole instanceof Uint8Array) cache!.offer(key, { status, headers, body: whole });
    send(res, status, headers, whole, gate);
  };
  const waiting = site.index.prepare?.(decision.pairs, pause);
  return waiting ? waiting.then(answer) : answer();
}

/** The answer to CONNECT (405 on the API, 404 elsewhere, as Django answers it), as bytes for the socket. */
export function answerConnect(req: IncomingMessage, site: SiteContext): Buffer {
  const decision = route({ method: 'CONNECT', target: originForm(req.url ?? '/'), accept: req.headers.accept }, site);
  // Only GET, HEAD and POST are routed to files or the writer.
  const answer =
    decision.kind === 'answer'
      ? decision
      : { status: 405, headers: JSON_HEADERS, body: Buffer.from(detailJson('Method "CONNECT" not allowed.')) };
  return rawResponse(
    answer.status,
    answer.headers,
    answer.body instanceof Uint8Array ? answer.body : bodyBytes(answer.body),
  );
}

function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  { file, headers }: StaticRoute,
  found: FileLookup,
  site: LoadedSite,
  options: HandlerOptions,
  live: () => void,
): void {
  if (found === 'absent') return live();
  if (found !== 'large') {
    if (found.etag !== undefined && matchesETag(req.headers[IF_NONE_MATCH] as string | undefined, found.etag))
      return send(res, 304, { ...headers, [ROUTES.header.etag]: found.etag });
    return sendBytes(res, 200, found.head, found.body, options.gate);
  }
  options.gate?.hold(res, 2 * FILE_CHUNK_BYTES);
  const relay = new RelayResponse(res, live);
  for (const name in headers) relay.setHeader(name, headers[name]!);
  delete req.headers.range;
  req.url = `/${file}`;
  options.track?.(res);
  site.files(req, relay as unknown as ServerResponse, live);
}

async function create(
  req: IncomingMessage,
  res: ServerResponse,
  options: HandlerOptions,
  apiRequest: ApiRequest,
  decision: Extract<Route, { kind: 'create' }>,
): Promise<void> {
  const fail = (status: number, detail: string, extra: HeaderFields = {}) => {
    const answer = render(apiRequest, decision.negotiation, status, detailJson(detail));
    send(res, status, { ...answer.headers, ...extra }, answer.body, options.gate);
  };
  if (!options.writer || options.token === undefined) {
    return fail(403, READ_ONLY_DETAIL);
  }
  const denied = checkToken(req.headers.authorization, options.token);
  if (denied) return fail(denied.status, denied.detail, { [ROUTES.header.authenticate]: 'Token' });
  const body = await readBody(req, options.bodyTimeout ?? DEFAULT_LIMITS.bodyTimeout);
  // The rest of a refused body is never read: the connection cannot carry another request.
  if ('djangoPage' in body) {
    const page = badRequest();
    return send(res, page.status, page.headers, page.body, options.gate);
  }
  if ('status' in body)
    return fail(body.status, body.detail, body.status === 413 || body.status === 408 ? { Connection: 'close' } : {});
  const result = validateNewCity(body.data, body.fromForm);
  if ('errors' in result)
    return answerWith(res, apiRequest, decision.negotiation, 400, JSON.stringify(result.errors), options.gate);
  let city: City;
  try {
    city = await options.writer.create(result.city);
  } catch (error) {
    if (!(error instanceof CreateRefused)) throw error;
    return fail(
      error.status,
      error.detail,
      error.retryAfter ? { [ROUTES.header.retryAfter]: String(error.retryAfter) } : {},
    );
  }
  answerWith(res, apiRequest, decision.negotiation, 201, cityJson(city), options.gate);
}

function answerWith(
  res: ServerResponse,
  req: ApiRequest,
  negotiation: Negotiation,
  status: number,
  json: string,
  gate: SendGate | undefined,
): void {
  const answer = render(req, negotiation, status, json);
  send(res, status, answer.headers, answer.body, gate);
}
