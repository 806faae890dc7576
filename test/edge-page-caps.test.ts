import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { cloudflareWorker, type CloudflareEnv } from '../src/platforms/cloudflare/adapter.js';
import { denoServer, type DenoFiles } from '../src/platforms/deno/adapter.js';
import type { PageCapOptions } from '../src/platforms/page-cap.js';
import { NETLIFY_STREAM_PAGE_CITIES, netlifyEdgeFunction } from '../src/platforms/netlify/adapter.js';
import { SIX_MB_PAGE_CITIES } from '../src/platforms/response-limit.js';
import type { SiteSettings } from '../src/site/spec.js';
import { BASE, kitIndex, tiedIndex } from './edge-answers.js';
import { memoryEdgeSite, sharedEdgeSite } from './edge-helpers.js';

// The caps an edge platform's CPU limit puts on a computed page: a page of more cities answers a
// 500 that says so, before any city is read; every other answer is the one given uncapped.
// Cloudflare: worker.js's maxPageCities (Workers Free stops a request at 10 ms of CPU), the Worker
// in process, its assets binding over the site's edge files in memory (workerd itself:
// edge-cloudflare.test.ts). Netlify: 10,000 cities streamed (50 ms of CPU on every plan), the
// function in process, reading the edge files from a local server as from its CDN. Deno:
// main.js's maxPageCities (Deno Deploy's free plan: 50 ms), the server over files in memory.

const SETTINGS: SiteSettings = {
  baseUrl: BASE,
  collation: 'codepoint',
  pageSizes: [10],
  // Nothing precomputed: every query below is the Worker's to compute.
  orderings: [],
  defaultPageSize: 10,
  compression: 'none',
  liveUrl: null,
};

async function workerOver(maxPageCities?: number) {
  const index = await kitIndex('cities48');
  const { files } = sharedEdgeSite(index);
  const env: CloudflareEnv = {
    ASSETS: {
      fetch: async (request) => {
        const bytes = files.get(new URL(request.url).pathname.slice(1));
        return bytes ? new Response(bytes) : new Response('', { status: 404 });
      },
    },
  };
  const worker = cloudflareWorker({ settings: SETTINGS }, maxPageCities === undefined ? {} : { maxPageCities });
  return {
    index,
    ask: async (query: string) => {
      const response = await worker.fetch(new Request(`${BASE}/cities/?${query}`), env);
      return { status: response.status, body: await response.text() };
    },
  };
}

const TOO_MANY = (cities: number) =>
  `{"detail":"a page of ${cities} cities is more than the 10 cities this Worker computes on a page (maxPageCities in worker.js: Workers Free stops a request at 10 ms of CPU); ask for a smaller page_size"}`;

describe('Cloudflare: maxPageCities 10 over 48 cities', () => {
  it.each([
    ['a page of 10: computed, as uncapped', 'page_size=10&page=2', 200],
    ['a multi-field page of 10', 'ordering=name_en,-id&page_size=10&page=3', 200],
    ['the last page, of fewer cities', 'page_size=10&page=last', 200],
    ['a page past the end: Invalid page, nothing computed', 'page_size=11&page=99', 404],
    ['page_size of 11', 'page_size=11', 500],
    ['page_size above the count (every city)', 'page_size=1000', 500],
    ['every city in the browsable form (assembled whole)', 'page_size=1000&format=api', 500],
    ['every city, format=json', 'page_size=1000&format=json', 500],
  ])('%s', async (_name, query, status) => {
    const capped = await workerOver(10);
    const uncapped = await workerOver();
    const answer = await capped.ask(query);
    if (status === 500) {
      expect(answer.status).toBe(500);
      if (!query.includes('format=api')) expect(answer.body).toBe(TOO_MANY(query.includes('1000') ? 48 : 11));
    } else expect(answer).toEqual(await uncapped.ask(query));
    expect(answer.status).toBe(status);
  });

  it('uncapped (Workers Paid), page_size above the count answers every city, as answerListing', async () => {
    const { index, ask } = await workerOver();
    const want = answerListing(index, parseQuery('page_size=1000'), BASE);
    expect(await ask('page_size=1000')).toEqual({
      status: 200,
      body: Buffer.from(bodyBytes(want.body)).toString(),
    });
  });

  it.each([0, -5, 2.5, Number.NaN])('maxPageCities %s is refused when worker.js loads, naming it', (cities) => {
    expect(() => cloudflareWorker({ settings: SETTINGS }, { maxPageCities: cities })).toThrow(
      /maxPageCities must be a whole number of cities, at least 1/,
    );
  });
});

describe(`Netlify: at most ${NETLIFY_STREAM_PAGE_CITIES} cities streamed`, () => {
  const count = 2 * NETLIFY_STREAM_PAGE_CITIES + 1;
  let origin: string;
  let server: Server;
  beforeAll(async () => {
    const { files } = memoryEdgeSite(tiedIndex(count));
    server = createServer((req, res) => {
      const bytes = files.get(decodeURIComponent(new URL(req.url!, 'http://x').pathname.slice(1)));
      res.writeHead(bytes ? 200 : 404).end(bytes);
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((closed) => server.close(closed)));

  const ask = async (query: string) => {
    const handler = netlifyEdgeFunction({ settings: SETTINGS });
    const next = () => Promise.reject(new Error('no file covers a query here'));
    const response = await handler(new Request(`${origin}/cities/?${query}`), { next });
    return { status: response.status, body: await response.text() };
  };

  it.each([
    ['a page of the cap, streamed', 'ordering=name_en,-id&page_size=10000&page=2', 200],
    ['a page past the end of page_size above the cap: Invalid page', 'page_size=10001&page=3', 404],
  ])('%s: as answerListing', async (_name, query, status) => {
    const want = answerListing(tiedIndex(count), parseQuery(query), BASE);
    expect(await ask(query)).toEqual({ status, body: Buffer.from(bodyBytes(want.body)).toString() });
  });

  it.each([
    [
      'page_size above the cap, streamed',
      'page_size=10001',
      `a page of ${NETLIFY_STREAM_PAGE_CITIES + 1} cities is more than the ${NETLIFY_STREAM_PAGE_CITIES} cities a Netlify edge function streams within the 50 ms of CPU Netlify gives a request; ask for a smaller page_size`,
    ],
    [
      'a page assembled whole (the browsable form), over its own cap',
      'page_size=5001&format=api',
      `a page of 5001 cities is more than the ${SIX_MB_PAGE_CITIES} an edge function answers; ask for a smaller page_size`,
    ],
  ])('%s: a 500 saying so', async (_name, query, detail) => {
    expect(await ask(query)).toEqual({ status: 500, body: JSON.stringify({ detail }) });
  });
});

describe('Deno: maxPageCities 10 over 48 cities (main.js, for Deno Deploy)', () => {
  const serverOver = async (options: PageCapOptions) => {
    const { files } = sharedEdgeSite(await kitIndex('cities48'));
    const bytes = (url: URL) => {
      const found = files.get(url.pathname.slice('/site/'.length));
      if (!found) throw new Error(`no file ${url.pathname}`);
      return found;
    };
    const deno: DenoFiles = {
      readFile: async (url) => bytes(url),
      stat: async (url) => ({ ino: 1, mtime: new Date(0), size: bytes(url).length }),
      open: async (url) => {
        const file = bytes(url);
        let at = 0;
        return {
          read: async (into) => {
            const n = Math.min(into.length, file.length - at);
            into.set(file.subarray(at, at + n));
            at += n;
            return n || null;
          },
          seek: async (offset) => (at = offset),
          stat: async () => ({ size: file.length }),
          close: () => {},
        };
      },
    };
    const server = denoServer({ settings: SETTINGS }, deno, new URL('file:///site/'), options);
    return async (query: string) => {
      const response = await server.fetch(new Request(`${BASE}/cities/?${query}`));
      return { status: response.status, body: await response.text() };
    };
  };

  it.each([
    ['a page of 10', 'ordering=name_en,-id&page_size=10&page=2', { maxPageCities: 10 }, 200],
    ['page_size above the count, uncapped (self-hosted)', 'page_size=1000', {}, 200],
  ])('%s: as answerListing', async (_name, query, options, status) => {
    const want = answerListing(await kitIndex('cities48'), parseQuery(query), BASE);
    expect(await (await serverOver(options))(query)).toEqual({
      status,
      body: Buffer.from(bodyBytes(want.body)).toString(),
    });
  });

  it('page_size above the cap: a 500 naming main.js and the plan', async () => {
    expect(await (await serverOver({ maxPageCities: 10 }))('page_size=1000')).toEqual({
      status: 500,
      body: JSON.stringify({
        detail:
          "a page of 48 cities is more than the 10 cities this server computes on a page (maxPageCities in main.js: Deno Deploy's free plan stops a request at 50 ms of CPU); ask for a smaller page_size",
      }),
    });
  });

  it('maxPageCities 0 is refused when main.js loads, naming it', () => {
    expect(() =>
      denoServer({ settings: SETTINGS }, {} as DenoFiles, new URL('file:///site/'), { maxPageCities: 0 }),
    ).toThrow(/maxPageCities must be a whole number of cities, at least 1 \(main\.js gives 0\)/);
  });
});
