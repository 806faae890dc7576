import type { Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { NAME_FIELDS } from '../core/fields.js';
import { endpointPath, ROUTES } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';
import type { SiteContext } from '../http/route-types.js';

/** A site of fewer cities is served without a warm-up (a preview, a test): its start stays quick. */
export const WARM_UP_CITIES = 10_000;
/**
 * Requests of each kind: about what V8 needs to have compiled their path (with 1,000, listing code was
 * still compiled under the first clients' load). At 140k cities they cost ~3 s of CPU per process at start (quiet).
 */
export const WARM_UP_REQUESTS = 2_500;
/** Connections the requests are sent on at once. */
const CONNECTIONS = 4;

/**
 * Before a server answers its first request: `server` (a private listener with the same request
 * handler, on loopback) answers requests of each kind a client may send, a precomputed page, a
 * one-field ordering and multi-field orderings never seen, so that V8 compiles their path now. Else
 * the first clients to send new orderings have it compiled under their load, by V8's threads at
 * the answering threads' priority (bench:orderings' first flat-out window against the next).
 */
export async function warmUp(server: Server, context: SiteContext): Promise<void> {
  if (context.index.count < WARM_UP_CITIES) return;
  const sockets: Socket[] = [];
  try {
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const targets = warmUpTargets(context);
    let next = 0;
    const client = async () => {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      const answers = answersOf(socket);
      while (next < targets.length) {
        socket.write(`GET ${targets[next++]} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
        if ((await answers.next()).done) throw new Error('the warm-up connection closed');
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, client));
  } catch {
    // No loopback listener, or a connection lost: the server only starts with its code less compiled.
  } finally {
    for (const socket of sockets) socket.destroy();
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * The answers a connection reads, one at a time, each once whole: by its Content-Length, or its
 * chunks up to the last. A raw socket, not node:http's client: the client's objects would also go
 * through node:http's code for responses, and V8 would compile that code for both.
 */
async function* answersOf(socket: Socket): AsyncGenerator<void> {
  let text = '';
  for await (const chunk of socket as AsyncIterable<Buffer>) {
    text += chunk.toString('latin1');
    for (let end = answerEnd(text); end >= 0; end = answerEnd(text)) {
      text = text.slice(end);
      yield;
    }
  }
}

/** Where the first answer in `text` ends, or -1 while it is not whole. */
function answerEnd(text: string): number {
  const head = text.indexOf('\r\n\r\n');
  if (head < 0) return -1;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head))?.[1];
  if (length !== undefined) return head + 4 + Number(length) <= text.length ? head + 4 + Number(length) : -1;
  for (let at = head + 4; ; ) {
    const line = text.indexOf('\r\n', at);
    if (line < 0) return -1;
    const size = Number.parseInt(text.slice(at, line), 16);
    if (!(size >= 0)) return text.length; // not an answer of ours: the rest dropped
    // The last chunk (size 0) is followed by an empty line (no trailers are sent).
    at = line + 2 + size + 2;
    if (at > text.length) return -1;
    if (size === 0) return at;
  }
}

/**
 * The targets warmUp() asks, in a fixed pseudo-random order (the same at every start): precomputed
 * pages, one-field orderings and new orderings of 2 to 4 fields, with and without a page size.
 */
export function warmUpTargets({ spec, index }: SiteContext): string[] {
  const path = escapeUriPath(endpointPath(spec.mount));
  let seed = 1;
  // The generator's high bits: its low ones repeat with a short period (the lowest alternates).
  const random = (n: number) => Math.floor(((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * n);
  const { ordering, page, pageSize } = ROUTES.param;
  const pageOf = (size: number) => `${page}=${1 + random(Math.max(1, Math.ceil(index.count / size)))}`;
  const sized = () => {
    const size = spec.pageSizes[random(spec.pageSizes.length)] ?? spec.defaultPageSize;
    return random(2) ? `${pageSize}=${size}&${pageOf(size)}` : pageOf(spec.defaultPageSize);
  };
  const terms = (n: number) => {
    const fields = [...NAME_FIELDS];
    return Array.from({ length: n }, () => {
      const [field] = fields.splice(random(fields.length), 1);
      return `${random(2) ? ROUTES.descending : ''}${field}`;
    }).join(',');
  };
  const targets: string[] = [];
  for (let i = 0; i < WARM_UP_REQUESTS; i++)
    targets.push(
      `${path}?${pageOf(spec.defaultPageSize)}`,
      `${path}?${ordering}=${terms(1)}&${sized()}`,
      `${path}?${ordering}=${terms(2 + random(3))}&${sized()}`,
    );
  return targets;
}
