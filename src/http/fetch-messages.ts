import type { Bytes } from '../core/bytes.js';
import type { Parts } from '../core/json-text.js';
import { ROUTES } from '../core/route-table.js';
import { readable } from './body-sink.js';
import { type ApiRequest, type HeaderFields, withFields } from './route-types.js';

// The fetch handler's two ends: a web-standard Request read as route() reads it, and an answer made a Response.

const { header } = ROUTES;

/** The request as route() reads it: path and query exactly as sent (the URL's href without its origin). */
export function apiRequestOf(request: Request): ApiRequest {
  const url = new URL(request.url);
  const fragment = url.href.indexOf('#');
  const target = url.href.slice(url.origin.length, fragment < 0 ? undefined : fragment);
  const preflight = request.method === 'OPTIONS' && request.headers.has(header.requestMethod);
  return {
    method: request.method,
    target,
    accept: request.headers.get(header.accept) ?? undefined,
    ifNoneMatch: request.headers.get(header.ifNoneMatch) ?? undefined,
    preflightHeaders: preflight ? (request.headers.get(header.requestHeaders) ?? '') : undefined,
  };
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
