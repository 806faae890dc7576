import type { Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { NAME_FIELDS } from '../core/fields.js';
import { endpointPath, ROUTES } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';
import { listen } from '../http/listen.js';
import type { SiteContext } from '../http/route-types.js';

/** A site of fewer cities is served without a warm-up (a preview, a test): its start stays quick. */
export const WARM_UP_CITIES = 10_000;
/**
 * Rounds of requests: each asks a precomputed page, a one-field ordering, a multi-field ordering
 * never seen and one asked before (about what V8 needs to have compiled their path: with 1,000
 * rounds, listing code was still compiled under the first clients' load). At 140k cities they cost
 * ~3 s of CPU per process at start (quiet).
 */
export const WARM_UP_REQUESTS = 2_500;
/** Connections the requests are sent on at once. */
const CONNECTIONS = 4;
/** Requests a connection sends before it ends (and another begins). */
const PER_CONNECTION = 50;
/** The first targets, asked again and again: what repeated queries take (route memo, file and answer caches). */
const HOT_TARGETS = 24;
/** A client's compressed variants (curl --compressed, browsers): the file cache keeps each. */
const ENCODINGS = 'Accept-Encoding: gzip, deflate, br\r\n';

/** One request of the warm-up. */
export interface WarmUpRequest {
  readonly method: 'GET' | 'HEAD';
  readonly target: string;
  /** Header lines besides Host, each ending in CRLF. */
  readonly headers: string;
  /** Sent with If-None-Match, naming the ETag its target was last answered with (if any). */
  readonly conditional: boolean;
}

/**
 * Before a server answers its first request: `server` (a private listener with the same request
 * path, on loopback) answers requests of each kind a client may send, so that V8 compiles their
 * path now: precomputed pages, one-field orderings and multi-field orderings never seen, pages
 * first, second, last and any, with and without a page size, asked again (from the caches),
 * HEAD, conditional, compressed. Else the first clients to send new orderings have it compiled
 * under their load, by V8's threads at the answering threads' priority (bench:orderings' first
 * flat-out window against the next). Nothing below `least` cities (a preview, a test: its start stays quick).
 */
export async function warmUp(server: Server, context: SiteContext, least = WARM_UP_CITIES): Promise<void> {
  if (context.index.count < least) return;
  const sockets: Socket[] = [];
  try {
    // listen(): the same listener on each connection as the front's (listen.ts), so their sockets have one shape.
    const listening = await listen(server, 0, '127.0.0.1');
    try {
      const { port } = server.address() as AddressInfo;
      const host = `Host: 127.0.0.1:${port}\r\n`;
      const requests = warmUpRequests(context);
      const etags = new Map<string, string>();
      let next = 0;
      // Each connection ends after PER_CONNECTION requests, by the client or (`Connection: close`) by the server, in
      // turn: the first clients' own connections then end on a path compiled here, with the objects' shapes settled.
      const client = async (lane: number) => {
        for (let round = lane; next < requests.length; round++) {
          const socket = connect(port, '127.0.0.1');
          sockets.push(socket);
          const answers = new Answers(socket);
          const closed = new Promise((resolve) => socket.once('close', resolve));
          for (let n = 1; n <= PER_CONNECTION && next < requests.length; n++) {
            const { method, target, headers, conditional } = requests[next++]!;
            const etag = conditional ? etags.get(target) : undefined;
            const ifNoneMatch = etag === undefined ? '' : `If-None-Match: ${etag}\r\n`;
            const close = n === PER_CONNECTION && round % 2 === 1 ? 'Connection: close\r\n' : '';
            socket.write(`${method} ${target} HTTP/1.1\r\n${host}${headers}${ifNoneMatch}${close}\r\n`);
            const tag = /\r\netag: *([^\r]*)/i.exec(await answers.next(method === 'HEAD'))?.[1];
            if (tag !== undefined) etags.set(target, tag);
          }
          socket.end();
          await closed;
        }
      };
      await Promise.all(Array.from({ length: CONNECTIONS }, (_, lane) => client(lane)));
    } finally {
      for (const socket of sockets) socket.destroy();
      await listening.close(0);
    }
  } catch {
    // No loopback listener, or a connection lost: the server only starts with its code less compiled.
  } finally {
    for (const socket of sockets) socket.destroy();
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * The answers a connection reads, one at a time, each once whole: by its Content-Length, or its
 * chunks up to the last; none after the head of a HEAD's answer or of a 1xx, 204 or 304. A raw
 * socket, not node:http's client: the client's objects would also go through node:http's code
 * for responses, and V8 would compile that code for both.
 */
class Answers {
  private text = '';
  private waiting: (() => void) | undefined;
  private ended = false;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.text += chunk.toString('latin1');
      this.waiting?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on('error', () => {});
  }

  /** The head of the next answer (to a HEAD if `head`), once it is whole; throws if the connection closed first. */
  async next(head: boolean): Promise<string> {
    for (;;) {
      const end = answerEnd(this.text, head);
      if (end >= 0) {
        const answer = this.text.slice(0, this.text.indexOf('\r\n\r\n'));
        this.text = this.text.slice(end);
        return answer;
      }
      if (this.ended) throw new Error('the warm-up connection closed');
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }
}

/** Where the first answer in `text` (to a HEAD if `head`) ends, or -1 while it is not whole. */
export function answerEnd(text: string, head = false): number {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return -1;
  const status = Number(text.slice(9, 12));
  if (head || status < 200 || status === 204 || status === 304) return headEnd + 4;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headEnd))?.[1];
  if (length !== undefined) return headEnd + 4 + Number(length) <= text.length ? headEnd + 4 + Number(length) : -1;
  for (let at = headEnd + 4; ; ) {
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

/** A large page (not precomputed unless a site's page sizes hold it): computed, sent in steps. */
const LARGE_PAGE = 1000;

/**
 * The requests warmUp() sends, in a fixed pseudo-random order (the same at every start), a round
 * at a time: a precomputed page (now and then a HEAD, or a page of the default ordering in a size
 * not precomputed, so computed), a one-field ordering, a new ordering of 2 to 4 fields (either
 * direction, each with and without a page size, now and then a large one), and one of the first
 * HOT_TARGETS again (conditional: If-None-Match with the ETag last answered). Pages first, second,
 * last (`last`) and any; a quarter accepting compressed variants.
 */
export function warmUpRequests({ spec, index }: SiteContext): WarmUpRequest[] {
  const path = escapeUriPath(endpointPath(spec.mount));
  let seed = 1;
  // The generator's high bits: its low ones repeat with a short period (the lowest alternates).
  const random = (n: number) => Math.floor(((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * n);
  const { ordering, page, pageSize } = ROUTES.param;
  const pageOf = (size: number) => {
    const pages = Math.max(1, Math.ceil(index.count / size));
    const which = random(16);
    return `${page}=${which === 0 ? ROUTES.lastPage : which === 1 ? Math.min(2, pages) : which === 2 ? 1 : 1 + random(pages)}`;
  };
  const computedSizes = [7, LARGE_PAGE].filter((size) => !spec.pageSizes.includes(size));
  const sized = () => {
    if (random(32) === 0) return `${pageSize}=${LARGE_PAGE}&${pageOf(LARGE_PAGE)}`;
    const size = spec.pageSizes[random(spec.pageSizes.length)] ?? spec.defaultPageSize;
    return random(2) ? `${pageSize}=${size}&${pageOf(size)}` : pageOf(spec.defaultPageSize);
  };
  const precomputed = () => {
    const size = random(16) === 0 ? computedSizes[random(computedSizes.length)] : undefined;
    return size === undefined ? pageOf(spec.defaultPageSize) : `${pageSize}=${size}&${pageOf(size)}`;
  };
  const terms = (n: number) => {
    const fields = [...NAME_FIELDS];
    return Array.from({ length: n }, () => {
      const [field] = fields.splice(random(fields.length), 1);
      return `${random(2) ? ROUTES.descending : ''}${field}`;
    }).join(',');
  };
  const request = (target: string, method: 'GET' | 'HEAD' = 'GET', conditional = false): WarmUpRequest => ({
    method,
    target,
    headers: random(4) === 0 ? ENCODINGS : '',
    conditional,
  });
  const requests: WarmUpRequest[] = [];
  for (let i = 0; i < WARM_UP_REQUESTS; i++) {
    requests.push(
      request(`${path}?${precomputed()}`, random(16) === 0 ? 'HEAD' : 'GET'),
      request(`${path}?${ordering}=${terms(1)}&${sized()}`),
      request(`${path}?${ordering}=${terms(2 + random(3))}&${sized()}`),
    );
    requests.push(request(requests[random(Math.min(HOT_TARGETS, requests.length))]!.target, 'GET', random(2) === 0));
  }
  return requests;
}
