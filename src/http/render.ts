import { browsablePage } from '../core/browsable.js';
import { utf8, type Bytes } from '../core/bytes.js';
import { lazyParts } from '../core/json-text.js';
import { negotiate, type Negotiation } from '../core/negotiate.js';
import { prettyParts } from '../core/pretty-json.js';
import { bodyBytes } from '../core/page.js';
import { paginate, pageSizeOf } from '../core/paginate.js';
import { lastValue, parseQuery, type QueryPair } from '../core/query-string.js';
import { ROUTES } from '../core/route-table.js';
import { splitTarget } from '../core/url-path.js';
import {
  API_HEADERS,
  JSON_HEADERS,
  withFields,
  type ApiRequest,
  type HeaderFields,
  type Route,
} from './route-types.js';

// An answer's bytes in the form the client negotiated (compact or indented JSON, the browsable
// page), and Django's own HTML pages.

const { header, djangoHeaders: DJANGO_HEADERS, contentType } = ROUTES;
/** Django's ERROR_PAGE_TEMPLATE, byte for byte (it starts with a newline). */
const NOT_FOUND_PAGE =
  '\n<!doctype html>\n<html lang="en">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n';
const BAD_REQUEST_PAGE =
  '\n<!doctype html>\n<html lang="en">\n<head>\n  <title>Bad Request (400)</title>\n</head>\n<body>\n  <h1>Bad Request (400)</h1><p></p>\n</body>\n</html>\n';

/** An API answer in the negotiated form: JSON (indented on request) or the browsable page. */
export function render(
  req: ApiRequest,
  negotiation: Negotiation,
  status: number,
  body: string | Bytes | Iterable<Bytes>,
  pairs?: readonly QueryPair[],
  count?: number,
): Extract<Route, { kind: 'answer' }> {
  const indent = 'indent' in negotiation ? negotiation.indent : null;
  const html = 'renderer' in negotiation && negotiation.renderer === 'html';
  if (!html && !indent)
    return { kind: 'answer', status, headers: JSON_HEADERS, body: typeof body === 'string' ? utf8(body) : body };
  const json: Iterable<Bytes> = typeof body === 'string' ? [utf8(body)] : body instanceof Uint8Array ? [body] : body;
  let produce = () => prettyParts(json, indent!);
  if (html) {
    pairs ??= parseQuery(splitTarget(req.target).query);
    const { Allow, Vary } = API_HEADERS;
    const shown = { Allow, [header.contentType]: contentType.json, Vary };
    const pageSize = lastValue(pairs, ROUTES.param.pageSize);
    // The paginator of a listing: the slice the answer holds (count is given for listings only).
    const pager =
      count !== undefined && status === 200
        ? (paginate(count, pageSizeOf(pageSize), lastValue(pairs, ROUTES.param.page)) ?? undefined)
        : undefined;
    const page = {
      method: req.method,
      target: req.target,
      status,
      headers: shown,
      json,
      ordering: lastValue(pairs, ROUTES.param.ordering),
      writable: req.writable,
      pageSize,
      pairs,
      pager,
    };
    produce = () => browsablePage(page);
  }
  // A large answer (in parts) stays in parts, produced while it is sent.
  const bytes =
    typeof body !== 'string' && !(body instanceof Uint8Array) && 'byteLength' in body
      ? lazyParts(produce)
      : bodyBytes(produce());
  return {
    kind: 'answer',
    status,
    headers: html ? withFields(API_HEADERS, { [header.contentType]: contentType.html }) : JSON_HEADERS,
    body: bytes,
  };
}

/** By format, then by Accept header (absent is its own key, never equal to any text). */
const negotiations = new Map<string | undefined, Map<string | undefined, Negotiation>>();
let remembered = 0;

/** negotiate(), remembered for the few Accept headers clients really send. */
export function negotiateCached(format: string | undefined, accept: string | undefined): Negotiation {
  const byAccept = negotiations.get(format);
  const known = byAccept?.get(accept);
  if (known) return known;
  const result = negotiate(format, accept);
  if ((format?.length ?? 0) + (accept?.length ?? 0) > 512) return result; // a client's oddity, not worth keeping
  if (remembered >= 256) {
    negotiations.clear();
    remembered = 0;
  }
  let forFormat = negotiations.get(format);
  if (!forFormat) negotiations.set(format, (forFormat = new Map()));
  forFormat.set(accept, result);
  remembered++;
  return result;
}

/** Django's own 400 page, for a request it refuses as suspicious (too many fields). */
export function badRequest(): Extract<Route, { kind: 'answer' }> {
  return djangoPage(400, DJANGO_HEADERS, BAD_REQUEST_PAGE, contentType.djangoPage);
}

export function djangoPage(
  status: number,
  headers: HeaderFields,
  html: string,
  type: string,
): Extract<Route, { kind: 'answer' }> {
  return { kind: 'answer', status, headers: withFields(headers, { [header.contentType]: type }), body: utf8(html) };
}

/** Django's 404 page, for a path that is not the endpoint's. */
export function notFound(): Extract<Route, { kind: 'answer' }> {
  return djangoPage(404, DJANGO_HEADERS, NOT_FOUND_PAGE, contentType.djangoPage);
}
