import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { loadSite, type LoadedSite } from '../src/http/site-state.js';
import { makeCity, tempDir } from './helpers.js';
import { pipelined, type PipelinedRequest } from './pipelined-client.js';
import { createAt, rawRequest, SMALL_SITE, startCli, writableCli } from './serve-helpers.js';

// A real serve process replaces the site it answers from (a POST to --writable, a --watch rebuild),
// and with it the WebAssembly memory its pages are assembled in, while slow clients still hold pages
// lent from the old memory's scratches: each client gets its pages as the old site made them, and
// the pages of the new site are right. Clients are raw sockets that pipeline large pages and read late.

const TOKEN = 'lent-token-0123456789';
let dir: string;
let cleanup: () => Promise<void>;
let data: string;
let site: string;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  data = join(dir, 'cities.json');
  site = join(dir, 'site');
  // Long names: a page of 400 cities is about 800 KB, more than a loopback socket takes at once.
  const cities = Array.from({ length: 900 }, (_, i) => makeCity(i + 1, { name: `City ${i} ${'x'.repeat(90)}` }));
  await writeFile(data, JSON.stringify(cities));
});
afterEach(async () => cleanup());

/** The page `site` computes for `query` (copied: nothing lent). */
const pageOf = (loaded: LoadedSite, query: string) =>
  Buffer.from(bodyBytes(answerListing(loaded.context.index, parseQuery(query), loaded.context.spec.baseUrl).body));

/** Pages of 400 cities a slow client asks: more than a loopback connection's buffers took here (about 3.9 MB, five). */
const LARGES = 12;
const larges = (tag: string) =>
  Array.from(
    { length: LARGES },
    (_, i): PipelinedRequest => ({ target: `/cities/?page_size=400&page=${(i % 2) + 1}&n=${tag}${i}` }),
  );
const query = (request: PipelinedRequest) => request.target.slice('/cities/?'.length);

/**
 * A slow client's answers across two reloads (sites: before, after each): each the page of a site,
 * the first the old one's, never an older after a newer, the last the newest's. Behind the send gate
 * a client's next page is computed once it took the last: the page before the first newer one was
 * still being sent across the reloads.
 */
function expectOldThenNewer(
  client: string,
  answers: { body: Buffer }[],
  asked: PipelinedRequest[],
  sites: LoadedSite[],
) {
  // Each answer as the site it is the page of (0: before the reloads, -1: none).
  const got = answers.map(({ body }, i) => sites.findIndex((loaded) => body.equals(pageOf(loaded, query(asked[i]!)))));
  expect(got, client).toHaveLength(asked.length);
  expect(got[0], client).toBe(0);
  expect(got, `${client}: -1 is a page of no site`).toEqual([...got].sort());
  expect(got, client).not.toContain(-1);
  expect(got.at(-1), `${client}: a page held by node across the reloads`).toBe(sites.length - 1);
}

/** The site's dataset count as its manifest says (the build that holds a change has been swapped in). */
const builtCount = async () =>
  (JSON.parse(await readFile(join(site, '_cities-api', 'manifest.json'), 'utf8')) as { dataset: { count: number } })
    .dataset.count;
const until = async (done: () => Promise<boolean>, ms = 60_000) => {
  for (const end = Date.now() + ms; !(await done().catch(() => false)) && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 50));
};

describe.each([
  [
    'a POST to serve --writable (the city folded in by a catch-up build)',
    () => writableCli(site, data, TOKEN),
    async (url: string, step = 1) => expect((await createAt(url, TOKEN, `Added ${step}`)).status).toBe(201),
  ],
  [
    'a --watch rebuild (the dataset file saved with one city renamed)',
    () => startCli([site, '--data', data, '--port', '0', '--watch', ...SMALL_SITE]),
    async (_url: string, step = 1) => {
      const cities = JSON.parse(await readFile(data, 'utf8')) as ReturnType<typeof makeCity>[];
      cities.push(makeCity(5000 + step, { name: `Added ${step}` }));
      await writeFile(data, JSON.stringify(cities));
    },
  ],
])('slow clients across a site reload by %s', (_, start, change) => {
  it('each client gets the pages of the site it asked, the new site its own', async () => {
    const served = await start();
    try {
      // It listens before its first build is served (503 meanwhile).
      await until(async () => (await rawRequest(`${served.url}/cities/?page_size=1`)).status === 200);
      const before = await loadSite(site);
      // Clients reading nothing: a page of each is held by node (lent from the old memory).
      const old = Array.from({ length: 3 }, (_, c) => larges(`old${c}-`));
      const oldClients = old.map((requests) => pipelined(Number(new URL(served.url).port), requests));
      expect((await rawRequest(`${served.url}/cities/?page_size=7&page=2&probe=1`)).status).toBe(200);
      await change(served.url);
      await until(async () => (await builtCount()) === 901);
      // The reload follows the swap: the new site answers its count once it is loaded or overlaid.
      await until(
        async () => JSON.parse((await rawRequest(`${served.url}/cities/?page_size=1`)).body.toString()).count === 901,
      );
      const after = await loadSite(site);
      const fresh = Array.from({ length: 3 }, (_, c) => larges(`new${c}-`));
      const freshClients = fresh.map((requests) => pipelined(Number(new URL(served.url).port), requests));
      for (const q of ['page_size=400&page=3&o=1', 'page_size=7&page=129&o=2', 'page_size=450&page=2&o=3']) {
        const body = (await rawRequest(`${served.url}/cities/?${q}`)).body;
        expect(body.equals(pageOf(after, q)), q).toBe(true);
      }
      // Behind the send gate, a client's next page is computed once it took the last: an old client's
      // first pages are the old site's, the rest (computed after the reload) the new one's.
      const sites = (requests: PipelinedRequest[], answers: { body: Buffer }[]) =>
        answers.map(({ body }, i) =>
          body.equals(pageOf(before, query(requests[i]!)))
            ? 'old'
            : body.equals(pageOf(after, query(requests[i]!)))
              ? 'new'
              : 'neither: a wrong byte',
        );
      for (const [c, client] of oldClients.entries()) {
        const got = sites(old[c]!, await client.read());
        expect(got).toHaveLength(LARGES);
        // Old pages, then new ones (how many of each: when node could write them, not known here).
        const firstNew = got.indexOf('new') < 0 ? got.length : got.indexOf('new');
        expect(got).toEqual(got.map((_, i) => (i < firstNew ? 'old' : 'new')));
        // The last computed after the reload: the page before the first new one was held across it.
        expect(got.at(-1)).toBe('new');
      }
      for (const [c, client] of freshClients.entries())
        expect(sites(fresh[c]!, await client.read())).toEqual(Array(LARGES).fill('new'));
      before.release();
      after.release();
    } finally {
      await served.stop();
    }
  });

  // 900 cities (1.8 MB): more than a page assembled whole, streamed part by part from the dataset as the
  // client takes them; 400 (800 KB): assembled in the memory's scratch and lent. On one connection that
  // reads nothing, more than the kernel's buffers take (here they took about 3.9 MB of it: five lent
  // pages), so one stops mid-way, its site kept meanwhile. These reloads grow the dataset by a city: a
  // later load read into the first memory stops short of its scratches (the describe below reaches them).
  it.each([
    ['pages streamed from the old dataset', 4, (tag: string) => `/cities/?page_size=900&page=1&n=${tag}`],
    ["pages lent from the old memory's scratch", 12, (tag: string) => `/cities/?page_size=400&page=2&n=${tag}`],
  ])(
    "across two more reloads (a memory a replaced site left is read into by a later load): %s stay the old site's",
    async (_, pages, target) => {
      const served = await start();
      const port = Number(new URL(served.url).port);
      try {
        await until(async () => (await rawRequest(`${served.url}/cities/?page_size=1`)).status === 200);
        const sites = [await loadSite(site)];
        const asked = [0, 1].map((c) =>
          Array.from({ length: pages }, (_, i): PipelinedRequest => ({ target: target(`${c}-${i}`) })),
        );
        const clients = asked.map((requests) => pipelined(port, requests));
        expect((await rawRequest(`${served.url}/cities/?page_size=7&page=2&probe=1`)).status).toBe(200);
        // The probe's answer does not wait for the clients' first pages (a POST's city is answered at once):
        // a moment for them to be computed from the old site.
        await new Promise((r) => setTimeout(r, 300));
        for (const step of [1, 2]) {
          await change(served.url, step);
          await until(async () => (await builtCount()) === 900 + step);
          // Loaded (not only overlaid with the POST's city): the precomputed page is the site's file again, gzipped.
          await until(async () => {
            const answer = await rawRequest(`${served.url}/cities/?page_size=10`, {
              headers: { 'Accept-Encoding': 'gzip' },
            });
            return answer.headers['content-encoding'] === 'gzip' && (await builtCount()) === 900 + step;
          });
          sites.push(await loadSite(site));
        }
        await expectServedAfter(served.url, target('fresh'), sites, clients, asked);
      } finally {
        await served.stop();
      }
    },
  );
});

// The rows above grow the dataset by a city: a later load read into the first memory ends short of
// its scratches. Here the second reload's dataset (2,901 cities, 5.8 MB) is larger than the first
// memory (900 cities, 1.8 MB, then a 1 MB scratch per page held), so that memory, were it given
// back or taken while a page lent from one of its scratches is still sent, would be read over
// that page: the client would get bytes of no site. Failed so with both the handler's hold and
// reclaim()'s refusal disabled ([0, 0, 0, 0, 0, -1, 2, ...]); either alone keeps the memory.
describe('slow clients across --watch reloads, the last one read over the first memory were it free', () => {
  it.each([["a page lent from the first memory's scratch stays the old site's", 1, 2_000]])(
    '%s (%i city added, then %i)',
    async (_, first, second) => {
      const served = await startCli([site, '--data', data, '--port', '0', '--watch', ...SMALL_SITE]);
      const grow = async (count: number) => {
        const cities = JSON.parse(await readFile(data, 'utf8')) as ReturnType<typeof makeCity>[];
        const from = 5000 + cities.length;
        for (let i = 0; i < count; i++)
          cities.push(makeCity(from + i, { name: `Added ${from + i} ${'y'.repeat(90)}` }));
        await writeFile(data, JSON.stringify(cities));
        return cities.length;
      };
      try {
        await until(async () => (await rawRequest(`${served.url}/cities/?page_size=1`)).status === 200);
        const sites = [await loadSite(site)];
        const target = (tag: string) => `/cities/?page_size=400&page=2&n=${tag}`;
        const asked = [0, 1].map((c) =>
          Array.from({ length: 12 }, (_, i): PipelinedRequest => ({ target: target(`${c}-${i}`) })),
        );
        const clients = asked.map((requests) => pipelined(Number(new URL(served.url).port), requests));
        expect((await rawRequest(`${served.url}/cities/?page_size=7&page=2&probe=1`)).status).toBe(200);
        // A second memory for the first reload; the second may take the first memory.
        for (const count of [first, second]) {
          const total = await grow(count);
          await until(async () => {
            const answer = await rawRequest(`${served.url}/cities/?page_size=10`, {
              headers: { 'Accept-Encoding': 'gzip' },
            });
            return answer.headers['content-encoding'] === 'gzip' && (await builtCount()) === total;
          });
          sites.push(await loadSite(site));
        }
        expect(sites[2]!.context.index.count).toBe(900 + first + second);
        await expectServedAfter(served.url, target('fresh'), sites, clients, asked);
      } finally {
        await served.stop();
      }
    },
  );
});

/** A fresh query answered from the last site, and each slow client's pages old then newer; the sites let go. */
async function expectServedAfter(
  url: string,
  fresh: string,
  sites: Awaited<ReturnType<typeof loadSite>>[],
  clients: { read(): Promise<Parameters<typeof expectOldThenNewer>[1]> }[],
  asked: PipelinedRequest[][],
): Promise<void> {
  const q = query({ target: fresh });
  expect((await rawRequest(`${url}/cities/?${q}`)).body.equals(pageOf(sites[2]!, q))).toBe(true);
  for (const [c, client] of clients.entries()) expectOldThenNewer(`client ${c}`, await client.read(), asked[c]!, sites);
  for (const loaded of sites) loaded.release();
}
