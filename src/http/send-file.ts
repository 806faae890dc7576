import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROUTES } from '../core/route-table.js';
import { matchesETag } from '../site/answer-tag.js';
import type { FileLookup } from './file-cache.js';
import { withFields, type StaticRoute } from './route-types.js';
import { send, sendBytes } from './send-answer.js';
import type { SendGate } from './send-gate.js';
import type { LoadedSite } from './site-state.js';
import { RelayResponse } from './sirv-response.js';

/** node:http joins repeated If-None-Match fields into one string. */
export const IF_NONE_MATCH = ROUTES.header.ifNoneMatch.toLowerCase();
/** What a file stream reads at a time (fs.createReadStream's default highWaterMark). */
const FILE_CHUNK_BYTES = 64 * 1024;

/**
 * Sends a site file: from memory when the file cache holds it (a 304 when its ETag matches), else
 * streamed by sirv; `live` computes the answer instead when the file is missing or unreadable.
 */
export function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  { file, headers }: StaticRoute,
  found: FileLookup,
  site: LoadedSite,
  options: { readonly gate?: SendGate | undefined; readonly track?: ((res: ServerResponse) => void) | undefined },
  live: () => void,
): void {
  if (found === 'absent') return live();
  if (found !== 'large') {
    if (found.etag !== undefined && matchesETag(req.headers[IF_NONE_MATCH] as string | undefined, found.etag))
      return send(res, 304, withFields(headers, { [ROUTES.header.etag]: found.etag }));
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
