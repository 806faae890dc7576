import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROUTES } from '../core/route-table.js';
import type { City } from '../core/fields.js';
import { detailJson, cityJson } from '../core/json-text.js';
import type { Negotiation } from '../core/negotiate.js';
import { CreateRefused, type CityStore } from '../post/city-store.js';
import { validateNewCity } from '../post/create-city.js';
import { DEFAULT_LIMITS } from './limits.js';
import { badRequest, render } from './render.js';
import { readBody } from './request-body.js';
import { READ_ONLY_DETAIL } from './route.js';
import { withFields, type ApiRequest, type HeaderFields, type Route } from './route-types.js';
import { send } from './send-answer.js';
import type { SendGate } from './send-gate.js';
import { checkToken } from './token-auth.js';

/** What answering a POST takes. */
export interface CreateOptions {
  /** Set when POST may create cities (`--writable`), with the token clients must send. */
  readonly writer?: CityStore | undefined;
  readonly token?: string | undefined;
  /** Longest pause within a POST body (ms). */
  readonly bodyTimeout?: number;
  /** Decides when each answer may be computed (see send-gate.ts); without one, at once. */
  readonly gate?: SendGate;
}

/** A POST answered: refused when read-only or without the token, else its body read and validated, and the city created (201). */
export async function create(
  req: IncomingMessage,
  res: ServerResponse,
  options: CreateOptions,
  apiRequest: ApiRequest,
  decision: Extract<Route, { kind: 'create' }>,
): Promise<void> {
  const fail = (status: number, detail: string, extra: HeaderFields = {}) => {
    const answer = render(apiRequest, decision.negotiation, status, detailJson(detail));
    send(res, status, withFields(answer.headers, extra), answer.body, options.gate);
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
