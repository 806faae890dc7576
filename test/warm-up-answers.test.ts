import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildHere } from '../src/app/build.js';
import { type Front, startFront } from '../src/app/front.js';
import { LiveSite } from '../src/app/live-site.js';
import { WARM_UP_REQUESTS, warmUpRequests } from '../src/app/warm-up.js';
import type { CityIndex } from '../src/core/city-index.js';
import type { City } from '../src/core/fields.js';
import { OverlayIndex } from '../src/core/overlay-index.js';
import { parseOrdering } from '../src/core/ordering.js';
import { DEFAULT_LIMITS } from '../src/http/limits.js';
import { LogLines } from '../src/http/log-line.js';
import { createHandler } from '../src/http/node-handler.js';
import { loadSite } from '../src/http/site-state.js';
import { makeCity, tempDir } from './helpers.js';

// serve's warm-up (app/warm-up.ts) answers through the handlers clients then use: what it kept
// (route decisions, computed answers) is forgotten before the first client. A client's first
// answers are those of a server that never warmed up: status, headers (but Date) and bytes. Also
// with cities added (POSTs) before the site opened: the warm-up then answers from an OverlayIndex.

let cleanup: () => Promise<void>;
const fronts: Front[] = [];
const sites: LiveSite[] = [];
/** A warmed front and a cold one on the same site, for each case: as built, and with cities added before open. */
const pairs: Record<string, { warmed: Front; cold: Front }> = {};
let hot: string[];
let siteDir: string;
/** What each warmed front's site kept as its warm-up ended: files cached, multi-field orders kept, and an overlay's placements and keys. */
const kept: Record<string, { files: number; orders: number; placements: number; keys: number }> = {};
/** Cities a POST would have added before the site opened: named to fall among the site's in every ordering. */
const ADDED: City[] = [makeCity(900_001, { name: 'Lyon' }), makeCity(900_002, { name: 'Zürich', top: true })];

/** The two cases: the site as built, and with ADDED answered beside it (an OverlayIndex) before the warm-up. */
const CASES: [string, readonly City[]][] = [
  ['as built', []],
  ['cities added before open', ADDED],
];

/** A front on the site, opened (after a warm-up of every site, whatever its size, if `warm`), `added` answered too. */
async function front(dir: string, warm: boolean, label: string, added: readonly City[]): Promise<Front> {
  const opened = await startFront({ dir, port: 0, limits: DEFAULT_LIMITS, log: () => {} });
  const live = await LiveSite.open(dir);
  fronts.push(opened);
  sites.push(live);
  live.addCities(added);
  if (warm) {
    const { cache, context } = live.current;
    const overlay = context.index instanceof OverlayIndex ? context.index : undefined;
    const base = (overlay?.base ?? context.index) as CityIndex;
    // One order kept as the warm-up's would be at 140k cities (here its pages take windows, composing none).
    base.order(parseOrdering('name_fr,-name_de'));
    overlay?.positions(parseOrdering('name_fr,-name_de'), 0, 10);
    await opened.warmUp(live, undefined, 0);
    // What FileCache, Orders (core/orders.ts) and OverlayIndex keep, in their private maps.
    const files = (cache as unknown as { entries: Map<string, unknown> }).entries;
    const orders = (base as unknown as { orders: { multi: Map<string, unknown> } }).orders.multi;
    const own = overlay as unknown as { placements: Map<string, unknown>; keys: Map<string, unknown> } | undefined;
    kept[label] = {
      files: files.size,
      orders: orders.size,
      placements: own?.placements.size ?? 0,
      keys: own?.keys.size ?? 0,
    };
  }
  opened.open(live, undefined);
  return opened;
}

beforeAll(async () => {
  let dir: string;
  ({ dir, cleanup } = await tempDir());
  const site = (siteDir = join(dir, 'site'));
  await buildHere({
    data: join(import.meta.dirname, '..', 'data', 'cities.csv'),
    out: site,
    baseUrl: 'http://x.test',
    pageSizes: [10],
  });
  for (const [label, added] of CASES)
    pairs[label] = { warmed: await front(site, true, label, added), cold: await front(site, false, label, added) };
  // Targets the warm-up asked again and again: kept by it (route memo, answer cache) until forgotten.
  hot = [...new Set(warmUpRequests(sites[0]!.current.context).map((r) => r.target))].slice(0, 6);
}, 60_000);
afterAll(async () => {
  await Promise.all(sites.map((live) => live.close()));
  await Promise.all(fronts.map((f) => f.close()));
  await cleanup?.();
});

/** What `url + target` answers, but its Date. */
function answer(url: string, target: string, method = 'GET', headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    request(`${url}${target}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const { date: _, connection: __, 'keep-alive': ___, ...rest } = res.headers;
        resolve({ status: res.statusCode!, headers: rest, body: Buffer.concat(chunks).toString() });
      });
    })
      .on('error', reject)
      .end();
  });
}

describe.each(CASES.map(([label]) => label))(
  "a client's first answers after a warm-up (%s), the same as from a server that did none",
  (label) => {
    it.each([
      ['a precomputed page', () => '/cities/?page=2', 'GET'],
      ['a new multi-field ordering', () => '/cities/?ordering=-name_fr,name_de&page=3', 'GET'],
      ['the last page of a one-field ordering', () => '/cities/?ordering=name_ar&page=last', 'GET'],
      ['a page size not precomputed', () => '/cities/?page_size=7&page=2', 'GET'],
      ['HEAD of a page', () => '/cities/?page=3', 'HEAD'],
      ['each target the warm-up asked most, three times', () => hot.join(' '), 'GET'],
    ])('%s', async (_, targets, method) => {
      const { warmed, cold } = pairs[label]!;
      for (const target of targets().split(' '))
        for (let time = 0; time < 3; time++)
          expect(await answer(warmed.url, target, method)).toEqual(await answer(cold.url, target, method));
    });

    it('a conditional request naming the ETag the page has', async () => {
      const { warmed, cold } = pairs[label]!;
      const target = hot[0]!;
      const etag = (await answer(cold.url, target)).headers.etag as string;
      const asked = (url: string) => answer(url, target, 'GET', { 'if-none-match': etag });
      expect(await asked(warmed.url)).toEqual(await asked(cold.url));
      expect((await asked(warmed.url)).status).toBe(304);
    });
  },
);

describe.each(CASES.map(([label]) => label))(
  'what the warm-up asked (%s), not kept after it (as the first client came)',
  (label) => {
    it.each([
      ['no file: each is read from the site again', () => expect(kept[label]!.files).toBe(0)],
      ['no multi-field order composed', () => expect(kept[label]!.orders).toBe(0)],
      [
        "no added city placed in an ordering, nor keyed in a field (an overlay's)",
        () => expect([kept[label]!.placements, kept[label]!.keys]).toEqual([0, 0]),
      ],
    ])('%s', (_, check) => check());
  },
);

describe("createHandler's forget(): what it answers next is computed, as by a new handler", () => {
  it.each([
    ['after forget(): a target asked three times before is computed again', true, 1],
    ['without: the third time and later from the answer cache', false, 0],
  ])('%s', async (_, forgetting, computed) => {
    const loaded = await loadSite(siteDir);
    const handler = createHandler({ site: () => loaded, answerCacheBytes: 1024 * 1024 });
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const target = '/cities/?ordering=-name_fr,name_de&page=2';
      for (let time = 0; time < 3; time++) await answer(url, target);
      if (forgetting) handler.forget();
      const index = loaded.context.index;
      const positions = index.positions.bind(index);
      let calls = 0;
      index.positions = (...args) => (calls++, positions(...args));
      await answer(url, target);
      expect(calls).toBe(computed);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      loaded.release();
    }
  });
});

describe('with the request log (no --quiet), the warm-up', () => {
  it("goes through the logging wrapper clients get (a line made for each of its requests), and writes none of them to the user's log", async () => {
    const written: string[] = [];
    const opened = await startFront({
      dir: siteDir,
      port: 0,
      limits: DEFAULT_LIMITS,
      log: () => {},
      requestLog: (lines) => written.push(...lines.split('\n')),
    });
    const live = await LiveSite.open(siteDir);
    const append = vi.spyOn(LogLines.prototype, 'append');
    try {
      await opened.warmUp(live, undefined, 0);
      // Four requests a round (warm-up.ts): each logged, into a log nobody reads.
      const made = append.mock.calls.length;
      opened.open(live, undefined);
      await answer(opened.url, '/cities/?page=2');
      await opened.close(); // the log flushed
      expect({ made, written: written.map((line) => line.split('"')[1]) }).toEqual({
        made: 4 * WARM_UP_REQUESTS,
        written: ['GET /cities/?page=2 HTTP/1.1'],
      });
    } finally {
      append.mockRestore();
      await live.close();
    }
  }, 60_000);
});
