import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NAME_FIELDS } from '../core/fields.js';
import { endpointPath, ROUTES } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';
import { listen } from '../http/listen.js';
import { startThread } from '../proc/workers.js';
import type { WarmUpProtocol, WarmUpRequest } from './warm-up-wire.js';
import type { SiteContext } from '../http/route-types.js';

/** A site of fewer cities is served without a warm-up (a preview, a test): its start stays quick. */
export const WARM_UP_CITIES = 10_000;
/**
 * Rounds of requests: each asks a precomputed page, a one-field ordering, a multi-field ordering
 * never seen and one asked before (about what V8 needs to have compiled their path: with 1,000
 * rounds, listing code was still compiled under the first clients' load). At 140k cities they cost
 * ~3 s of CPU per process at start (quiet).
 */
export const WARM_UP_REQUESTS = 2_000;
/** Connections the requests are sent on at once. */
const CONNECTIONS = 4;
/** The first targets, asked again and again: what repeated queries take (route memo, file and answer caches). */
const HOT_TARGETS = 24;
/** A client's compressed variants (curl --compressed, browsers): the file cache keeps each. */
const ENCODINGS = 'Accept-Encoding: gzip, deflate, br\r\n';

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
  try {
    // listen(): the same listener on each connection as the front's (listen.ts), so their sockets have one shape.
    const listening = await listen(server, 0, '127.0.0.1');
    try {
      const { port } = server.address() as AddressInfo;
      // In a thread: its sockets and streams are another isolate's, so V8 compiles this one's code for the server's alone.
      const thread = startThread<WarmUpProtocol>('app/warm-up-client', { name: 'the warm-up client' });
      try {
        await thread.call('ask', { port, requests: warmUpRequests(context), connections: CONNECTIONS });
      } finally {
        await thread.stop();
      }
    } finally {
      await listening.close(0);
    }
  } catch {
    // No loopback listener, or a connection lost: the server only starts with its code less compiled.
  } finally {
    if (server.listening) await new Promise((resolve) => server.close(resolve));
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
    if (random(128) === 0) return `${pageSize}=${LARGE_PAGE}&${pageOf(LARGE_PAGE)}`;
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
