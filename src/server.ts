import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CityWriter } from './city-writer.js';
import { validateNewCity } from './create-city.js';
import { detailJson, cityJson } from './json-text.js';
import type { Negotiation } from './negotiate.js';
import { readBody } from './request-body.js';
import { render, route, type ApiRequest, type Headers } from './respond.js';
import type { SiteState } from './site-state.js';
import { checkToken } from './token-auth.js';

export interface HandlerOptions {
  /** The site to answer from now (it changes after a rebuild). */
  readonly site: () => SiteState;
  /** Told about each response that streams a site file, until it finishes. */
  readonly track?: (res: ServerResponse) => void;
  /** Set when POST may create cities (`--writable`), with the token clients must send. */
  readonly writer?: CityWriter | undefined;
  readonly token?: string | undefined;
  readonly onError?: (error: unknown) => void;
}

/** The HTTP request handler: routes each request, sends static files through sirv, computes the rest. */
export function createHandler(options: HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(req, res, options).catch((error) => {
      options.onError?.(error);
      if (!res.headersSent) send(res, 500, { 'Content-Type': 'application/json' }, Buffer.from(detailJson('A server error occurred.')));
      else res.destroy();
    });
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, options: HandlerOptions): Promise<void> {
  const site = options.site();
  const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
  const apiRequest: ApiRequest = {
    method: req.method ?? 'GET',
    target: req.url ?? '/',
    accept: req.headers.accept,
    preflightHeaders: preflight ? (req.headers['access-control-request-headers'] ?? '') : undefined,
  };
  const decision = route(apiRequest, site.context);
  if (decision.kind === 'answer') return send(res, decision.status, decision.headers, decision.body);
  if (decision.kind === 'static') {
    for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
    delete req.headers.range;
    req.url = `/${decision.file}`;
    options.track?.(res);
    return site.files(req, res, () => send(res, 404, decision.headers, Buffer.from(detailJson('Not found.'))));
  }
  const fail = (status: number, detail: string, extra: Headers = {}) => {
    const answer = render(apiRequest, decision.negotiation, status, detailJson(detail));
    send(res, status, { ...answer.headers, ...extra }, answer.body);
  };
  if (!options.writer || options.token === undefined) {
    return fail(403, 'This API is read-only: start cities-api serve with --writable and CITIES_API_TOKEN set to accept POST.');
  }
  const denied = checkToken(req.headers.authorization, options.token);
  if (denied) return fail(denied.status, denied.detail, { 'WWW-Authenticate': 'Token' });
  const body = await readBody(req);
  if ('status' in body) return fail(body.status, body.detail, body.status === 413 ? { Connection: 'close' } : {});
  const result = validateNewCity(body.data, body.fromForm);
  if ('errors' in result) return answerWith(res, apiRequest, decision.negotiation, 400, JSON.stringify(result.errors));
  const city = await options.writer.create(result.city);
  answerWith(res, apiRequest, decision.negotiation, 201, cityJson(city));
}

function answerWith(res: ServerResponse, req: ApiRequest, negotiation: Negotiation, status: number, json: string): void {
  const answer = render(req, negotiation, status, json);
  send(res, status, answer.headers, answer.body);
}

function send(res: ServerResponse, status: number, headers: Headers, body: Buffer): void {
  res.writeHead(status, { ...headers, 'Content-Length': String(body.length) });
  res.end(body);
}
