import { describe, expect, it } from 'vitest';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { cloudflareWorker, type CloudflareEnv } from '../src/platforms/cloudflare/adapter.js';
import type { SiteSettings } from '../src/site/spec.js';
import { BASE, kitIndex } from './edge-answers.js';
import { sharedEdgeSite } from './edge-helpers.js';

// worker.js's maxPageCities (for Workers Free, which stops a request at 10 ms of CPU): a computed
// page of more cities answers a 500 that says so, before any city is read; every other answer is
// the one the Worker gives uncapped. The Worker runs in process, its assets binding over the
// site's edge files in memory (workerd itself: edge-cloudflare.test.ts).

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

describe('maxPageCities 10 over 48 cities', () => {
  it.each([
    ['a page of 10: computed, as uncapped', 'page_size=10&page=2', 200],
    ['a multi-field page of 10', 'ordering=name_en,-id&page_size=10&page=3', 200],
    ['the last page, of fewer cities', 'page_size=10&page=last', 200],
    ['a page past the end: Invalid page, nothing computed', 'page_size=11&page=99', 404],
    ['page_size of 11', 'page_size=11', 500],
    ['page_size above the count (every city)', 'page_size=1000', 500],
    ['every city in the browsable form (assembled whole)', 'page_size=1000&format=api', 500],
    ['every city, indented JSON (assembled whole)', 'page_size=1000&format=json', 500],
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
