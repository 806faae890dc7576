import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { WARM_UP_CITIES, WARM_UP_REQUESTS, warmUp, warmUpRequests } from '../src/app/warm-up.js';
import { answerEnd, type WarmUpRequest } from '../src/app/warm-up-wire.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { parseOrdering } from '../src/core/ordering.js';
import type { SiteContext } from '../src/http/route-types.js';

/** What warmUp reads of a site: its spec's mount and page sizes, and how many cities it has. */
const site = (count: number, pageSizes = [10, 100], mount = '') =>
  ({ spec: { mount, pageSizes, defaultPageSize: pageSizes[0] }, index: { count } }) as unknown as SiteContext;

/** A request as a server saw it. */
interface Seen {
  readonly method: string;
  readonly target: string;
  readonly ifNoneMatch: string | undefined;
  readonly connectionClose: boolean;
  readonly connection: number;
}

/**
 * A server that answers every request `status` (whole, or chunked) with an ETag of its target
 * (304 to an If-None-Match naming it), and records what it saw.
 */
function recording(status = 200, chunked = false): { server: Server; seen: Seen[] } {
  const seen: Seen[] = [];
  const connections = new WeakMap<object, number>();
  let opened = 0;
  const server = createServer((req, res) => {
    if (!connections.has(req.socket)) connections.set(req.socket, opened++);
    const etag = `"t-${req.url}"`;
    seen.push({
      method: req.method!,
      target: req.url!,
      ifNoneMatch: req.headers['if-none-match'],
      connectionClose: req.headers.connection === 'close',
      connection: connections.get(req.socket)!,
    });
    if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
    if (!chunked) return void res.writeHead(status, { 'content-type': 'application/json', etag }).end('{}');
    // Chunked (no Content-Length), as a large page may be sent: its parts, one a bare "0" line's length in hex.
    res.writeHead(status, { 'content-type': 'application/json', etag });
    res.write('[');
    res.write(`"${'x'.repeat(70_000)}"\r\n0\r\n\r\n"`);
    res.end(']');
  });
  return { server, seen };
}

const query = (target: string) => new URLSearchParams(target.slice(target.indexOf('?') + 1));

describe('warmUpRequests', () => {
  const requests = warmUpRequests(site(135_233));
  const targets = requests.map((r) => r.target);
  const orderings = targets.map((t) => query(t).get('ordering'));
  const terms = (n: number) => orderings.filter((o) => o !== null && parseOrdering(o).length === n).length;
  const share = (test: (r: WarmUpRequest) => boolean) => requests.filter(test).length / requests.length;
  it.each([
    ['the same requests at every start', () => expect(warmUpRequests(site(135_233))).toEqual(requests)],
    ['four requests a round', () => expect(requests.length).toBe(4 * WARM_UP_REQUESTS)],
    [
      'pages of the default ordering (no ordering), a round each at least',
      () => expect(orderings.filter((o) => o === null).length).toBeGreaterThanOrEqual(WARM_UP_REQUESTS),
    ],
    ['one-field orderings, a round each at least', () => expect(terms(1)).toBeGreaterThanOrEqual(WARM_UP_REQUESTS)],
    [
      'orderings of 2, 3 and 4 fields',
      () => expect([terms(2), terms(3), terms(4)].every((n) => n > WARM_UP_REQUESTS / 4)).toBe(true),
    ],
    [
      'the fourth of each round one of the first 24 targets again',
      () => {
        const hot = new Set(targets.slice(0, 24));
        expect(requests.filter((_, i) => i % 4 === 3).every((r) => hot.has(r.target))).toBe(true);
        expect(new Set(requests.filter((_, i) => i % 4 === 3).map((r) => r.target)).size).toBeGreaterThan(12);
      },
    ],
    [
      'only fields a client may order by, each once in an ordering',
      () =>
        expect(
          orderings.every((o) => {
            if (o === null) return true;
            const fields = parseOrdering(o).map((t) => t.field);
            return fields.every((f) => NAME_FIELDS.includes(f)) && new Set(fields).size === fields.length;
          }),
        ).toBe(true),
    ],
    [
      "each of the site's page sizes, none, and sizes not precomputed (7, a large 1,000)",
      () =>
        expect(new Set(targets.map((t) => query(t).get('page_size')))).toEqual(
          new Set([null, '10', '100', '7', '1000']),
        ),
    ],
    [
      'pages first, second, last (`last`) and any, from the first to the last of their size, never past it',
      () => {
        const pages = targets.map((t) => query(t).get('page'));
        expect(['1', '2', 'last'].every((p) => pages.includes(p))).toBe(true);
        const numbered = targets.filter((t) => query(t).get('page') !== 'last');
        const within = numbered.map((t) => {
          const size = Number(query(t).get('page_size') ?? 10);
          return { page: Number(query(t).get('page')), last: Math.ceil(135_233 / size) };
        });
        expect(within.every(({ page, last }) => page >= 1 && page <= last)).toBe(true);
        expect(within.some(({ page }) => page > 10_000)).toBe(true);
      },
    ],
    ['some HEAD requests, the others GET', () => expect(share((r) => r.method === 'HEAD')).toBeGreaterThan(0.005)],
    [
      'about a quarter accepting compressed variants',
      () => expect(share((r) => /^Accept-Encoding: gzip, deflate, br\r\n$/.test(r.headers))).toBeGreaterThan(0.2),
    ],
    ['some conditional (repeated targets only)', () => expect(share((r) => r.conditional)).toBeGreaterThan(0.1)],
    [
      "under the site's mount, escaped",
      () =>
        expect(
          warmUpRequests(site(20_000, [10], '/api/café')).every((r) => r.target.startsWith('/api/caf%C3%A9/cities/?')),
        ).toBe(true),
    ],
  ])('%s', (_, check) => check());
});

describe('warmUp', () => {
  it.each([
    ['a site of fewer cities than WARM_UP_CITIES: nothing asked, nothing listened on', WARM_UP_CITIES - 1, 200, false],
    ['a site of WARM_UP_CITIES: every request asked once, then the listener closed', WARM_UP_CITIES, 200, false],
    ['answers that are errors: every request still asked (only the path matters)', WARM_UP_CITIES, 500, false],
    ["chunked answers, a chunk holding the last chunk's bytes: each read whole", WARM_UP_CITIES, 200, true],
  ])('%s', async (_, count, status, chunked) => {
    const { server, seen } = recording(status, chunked);
    await warmUp(server, site(count));
    const asked = count < WARM_UP_CITIES ? [] : warmUpRequests(site(count));
    const key = (r: { method: string; target: string }) => `${r.method} ${r.target}`;
    expect(seen.map(key).sort()).toEqual(asked.map(key).sort());
    expect(server.listening).toBe(false);
  });

  it.each([
    [
      'connections end after a while, by the client or by the server (Connection: close), in turn',
      (seen: Seen[]) => {
        const connections = new Set(seen.map((s) => s.connection)).size;
        expect(connections).toBeGreaterThan(100);
        const closing = seen.filter((s) => s.connectionClose).length;
        expect(closing).toBeGreaterThan(connections / 4);
        expect(closing).toBeLessThan((connections * 3) / 4);
      },
    ],
    [
      'conditional requests name the ETag their target was answered with',
      (seen: Seen[]) => {
        const conditional = seen.filter((s) => s.ifNoneMatch !== undefined);
        expect(conditional.length).toBeGreaterThan(seen.length / 20);
        expect(conditional.every((s) => s.ifNoneMatch === `"t-${s.target}"`)).toBe(true);
      },
    ],
    [
      'answers to HEAD (a Content-Length, no body) and 304s are read without waiting for a body',
      (seen: Seen[]) => expect(seen.length).toBe(4 * WARM_UP_REQUESTS),
    ],
  ])('%s', async (_, check) => {
    const { server, seen } = recording();
    await warmUp(server, site(WARM_UP_CITIES));
    check(seen);
  });

  it('a listener that cannot listen: the warm-up is left out, without an error', async () => {
    const { server, seen } = recording();
    // Listening already: listen() again fails (ERR_SERVER_ALREADY_LISTEN).
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await expect(warmUp(server, site(WARM_UP_CITIES))).resolves.toBeUndefined();
    expect(seen).toEqual([]);
    expect(server.listening).toBe(false);
  });
});

describe('answerEnd', () => {
  const head = (status: number, headers = 'Content-Length: 2') => `HTTP/1.1 ${status} X\r\n${headers}\r\n\r\n`;
  it.each([
    ['an answer with its Content-Length of body', `${head(200)}{}`, false, head(200).length + 2],
    ['its body not all there yet', `${head(200)}{`, false, -1],
    ['the head not all there yet', 'HTTP/1.1 200 X\r\nContent-Le', false, -1],
    ["a HEAD's answer: its head only, whatever its Content-Length", `${head(200)}HTTP/1.1`, true, head(200).length],
    ['a 304: its head only', `${head(304, 'ETag: "a"')}HTTP/1.1`, false, head(304, 'ETag: "a"').length],
    [
      'a chunked answer up to its last chunk',
      `${head(200, 'Transfer-Encoding: chunked')}2\r\n{}\r\n0\r\n\r\nHTTP`,
      false,
      head(200, 'Transfer-Encoding: chunked').length + 12,
    ],
  ])('%s', (_, text, isHead, end) => expect(answerEnd(text, isHead)).toBe(end));
});
