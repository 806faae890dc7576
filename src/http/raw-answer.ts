import { STATUS_CODES, type IncomingMessage } from 'node:http';
import { detailJson } from '../core/json-text.js';
import { bodyBytes } from '../core/page.js';
import { originForm } from '../core/url-path.js';
import { route } from './route.js';
import { JSON_HEADERS, type HeaderFields, type SiteContext } from './route-types.js';
import type { ServerLimits } from './limits.js';

// Answers for requests node:http refuses before there is a request object (malformed, too
// large, too slow) or hands over without a response object (CONNECT): the bytes to write on
// the socket, with the reference's headers, after which the connection is closed.

export interface RawAnswer {
  readonly status: number;
  readonly detail: string;
}

/** The answer to a client error node:http reports by its code; null when the client is gone. */
export function clientErrorAnswer(code: string | undefined, limits: ServerLimits): RawAnswer | null {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return null;
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        detail: `Request header fields too large: the request line and headers must fit in ${limits.maxHeaderSize} bytes.`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        detail: `Request timeout: headers must arrive within ${limits.headersTimeout} ms and the whole request within ${limits.requestTimeout} ms.`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, detail: 'Chunk extensions too large.' };
    default:
      return {
        status: 400,
        detail: `Malformed HTTP request${code?.startsWith('HPE_') ? ` (${code.slice(4).toLowerCase().replaceAll('_', ' ')})` : ''}.`,
      };
  }
}

/** A complete HTTP/1.1 response that closes the connection. */
export function rawResponse(status: number, headers: HeaderFields, body: Uint8Array): Buffer {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push(`Content-Length: ${body.length}`, 'Connection: close', '', '');
  const text = Buffer.from(lines.join('\r\n'), 'latin1');
  return Buffer.concat([text, body]);
}

/** A client error as a JSON answer. */
export function rawDetail(answer: RawAnswer): Buffer {
  return rawResponse(answer.status, JSON_HEADERS, Buffer.from(detailJson(answer.detail)));
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
