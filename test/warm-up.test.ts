import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { WARM_UP_CITIES, WARM_UP_REQUESTS, warmUp, warmUpTargets } from '../src/app/warm-up.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { parseOrdering } from '../src/core/ordering.js';
import type { SiteContext } from '../src/http/route-types.js';

/** What warmUp reads of a site: its spec's mount and page sizes, and how many cities it has. */
const site = (count: number, pageSizes = [10, 100], mount = '') =>
  ({ spec: { mount, pageSizes, defaultPageSize: pageSizes[0] }, index: { count } }) as unknown as SiteContext;

/** A server that answers every request `status` (whole, or chunked) and records its target. */
function recording(status = 200, chunked = false): { server: Server; targets: string[] } {
  const targets: string[] = [];
  const server = createServer((req, res) => {
    targets.push(req.url!);
    if (!chunked) return void res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    // Chunked (no Content-Length), as a large page may be sent: its parts, one a bare "0" line's length in hex.
    res.writeHead(status, { 'content-type': 'application/json' });
    res.write('[');
    res.write(`"${'x'.repeat(70_000)}"\r\n0\r\n\r\n"`);
    res.end(']');
  });
  return { server, targets };
}

const query = (target: string) => new URLSearchParams(target.slice(target.indexOf('?') + 1));

describe('warmUpTargets', () => {
  const targets = warmUpTargets(site(135_233));
  const orderings = targets.map((t) => query(t).get('ordering'));
  const terms = (n: number) => orderings.filter((o) => o !== null && parseOrdering(o).length === n).length;
  it.each([
    ['the same targets at every start', () => expect(warmUpTargets(site(135_233))).toEqual(targets)],
    [
      'precomputed pages (no ordering, no page size)',
      () => expect(orderings.filter((o) => o === null).length).toBe(WARM_UP_REQUESTS),
    ],
    ['one-field orderings', () => expect(terms(1)).toBe(WARM_UP_REQUESTS)],
    [
      'orderings of 2, 3 and 4 fields',
      () => expect([terms(2), terms(3), terms(4)].every((n) => n > WARM_UP_REQUESTS / 4)).toBe(true),
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
      "each of the site's page sizes, and none",
      () => expect(new Set(targets.map((t) => query(t).get('page_size')))).toEqual(new Set([null, '10', '100'])),
    ],
    [
      'pages from the first to the last of their size, never past it',
      () => {
        const pages = targets.map((t) => {
          const size = Number(query(t).get('page_size') ?? 10);
          return { page: Number(query(t).get('page')), last: Math.ceil(135_233 / size) };
        });
        expect(pages.every(({ page, last }) => page >= 1 && page <= last)).toBe(true);
        expect(pages.some(({ page }) => page > 10_000)).toBe(true);
      },
    ],
    [
      "under the site's mount, escaped",
      () =>
        expect(
          warmUpTargets(site(20_000, [10], '/api/café')).every((t) => t.startsWith('/api/caf%C3%A9/cities/?')),
        ).toBe(true),
    ],
  ])('%s', (_, check) => check());
});

describe('warmUp', () => {
  it.each([
    [
      'a site of fewer cities than WARM_UP_CITIES: nothing asked, nothing listened on',
      WARM_UP_CITIES - 1,
      200,
      false,
      0,
    ],
    [
      'a site of WARM_UP_CITIES: every target asked once, then the listener closed',
      WARM_UP_CITIES,
      200,
      false,
      3 * WARM_UP_REQUESTS,
    ],
    [
      'answers that are errors: every target still asked (only the path matters)',
      WARM_UP_CITIES,
      500,
      false,
      3 * WARM_UP_REQUESTS,
    ],
    [
      "chunked answers, a chunk holding the last chunk's bytes: each read whole",
      WARM_UP_CITIES,
      200,
      true,
      3 * WARM_UP_REQUESTS,
    ],
  ])('%s', async (_, count, status, chunked, asked) => {
    const { server, targets } = recording(status, chunked);
    await warmUp(server, site(count));
    expect(targets.length).toBe(asked);
    expect(new Set(targets)).toEqual(new Set(asked ? warmUpTargets(site(count)) : []));
    expect(server.listening).toBe(false);
  });

  it('a listener that cannot listen: the warm-up is left out, without an error', async () => {
    const { server, targets } = recording();
    // Listening already: listen() again fails (ERR_SERVER_ALREADY_LISTEN).
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await expect(warmUp(server, site(WARM_UP_CITIES))).resolves.toBeUndefined();
    expect(targets).toEqual([]);
    expect(server.listening).toBe(false);
  });
});
