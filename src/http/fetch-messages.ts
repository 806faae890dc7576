import type { Bytes } from '../core/bytes.js';
import type { Parts } from '../core/json-text.js';
import { ROUTES } from '../core/route-table.js';
import { readable } from './body-sink.js';
import { type ApiRequest, type HeaderFields, withFields } from './route-types.js';

// The fetch handler's two ends: a web-standard Request read as route() reads it, and an answer made a Response.

const { header } = ROUTES;

/**
 * The request as route() reads it: path and query exactly as sent. `sent`: the target where the
 * platform gives it apart from the URL (Lambda's rawPath), else the URL's text after its origin,
 * read as text: a URL parser would resolve dot segments (`/./cities/`, `/x/%2e%2e/cities/`),
 * which the reference answers 404, and Deno's request.url keeps them as the client sent them.
 */
export function apiRequestOf(request: Request, sent = targetOf(request.url)): ApiRequest {
  const fragment = sent.indexOf('#');
  const target = fragment < 0 ? sent : sent.slice(0, fragment);
  const preflight = request.method === 'OPTIONS' && request.headers.has(header.requestMethod);
  return {
    method: request.method,
    target,
    accept: request.headers.get(header.accept) ?? undefined,
    ifNoneMatch: request.headers.get(header.ifNoneMatch) ?? undefined,
    preflightHeaders: preflight ? (request.headers.get(header.requestHeaders) ?? '') : undefined,
  };
}

/** A request URL's path and query: its text after `scheme://authority` (a URL serializer writes `/` for no path). */
function targetOf(url: string): string {
  const rest = url.slice(url.indexOf('//') + 2);
  const end = rest.search(/[/?#]/);
  if (end < 0) return '/';
  return rest[end] === '/' ? rest.slice(end) : `/${rest.slice(end)}`;
}

/** An answer as a Response: one array, or a large page streamed part by part as the client reads. */
export function respond(
  req: ApiRequest,
  status: number,
  headers: HeaderFields,
  body: Bytes | Iterable<Bytes> | Parts,
): Response {
  const parts = body instanceof Uint8Array ? [body] : body;
  const whole = Array.isArray(parts) && parts.length === 1 ? (parts[0] as Bytes) : null;
  const length = whole ? whole.length : 'byteLength' in parts ? parts.byteLength : null;
  const sent = length === null ? headers : withFields(headers, { [header.contentLength]: String(length) });
  if (req.method === 'HEAD') return new Response(null, { status, headers: sent });
  if (whole) return new Response(whole, { status, headers: sent });
  return new Response(readable(parts[Symbol.iterator]()), { status, headers: sent });
}
