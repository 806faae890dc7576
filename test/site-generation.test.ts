import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { createHandler } from '../src/http/node-handler.js';
import { loadSite, type LoadedSite } from '../src/http/site-state.js';
import { KIT, tempDir } from './helpers.js';
import { rawRequest } from './serve-helpers.js';

// A server answers from the build it loaded, never from two: a `cities-api build` into its
// directory (a new tree renamed in, the old one removed) changes nothing it answers until it loads
// the new site, even for pages it never read before.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-generation-')));
afterAll(() => cleanup());

const site = () => join(root, 'site');
const buildFrom = (name: string) =>
  build({
    data: join(KIT, name),
    out: site(),
    baseUrl: 'http://api.example.com',
    collation: 'codepoint',
    orderings: ['default', '-name_en'],
    pageSizes: [10, 20],
  });

async function serving<T>(state: () => LoadedSite, run: (url: string) => Promise<T>): Promise<T> {
  const server: Server = createServer(createHandler({ site: state }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}/cities/`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const count = async (url: string, encoding?: string) => {
  const res = await rawRequest(url, encoding ? { headers: { 'accept-encoding': encoding } } : {});
  expect(res.headers['content-encoding']).toBeUndefined(); // small pages or not: the count must be readable
  return (JSON.parse(res.body.toString()) as { count: number }).count;
};

describe('one server never answers from two builds', () => {
  it.each([
    ['a page read before the rebuild', '?page=1'],
    ['a page never read before', '?page=2'],
    ['another ordering, never read', '?ordering=-name_en&page=2'],
    ['another page size, never read', '?page_size=20'],
  ])('%s: from the build it loaded, until it loads the new one', async (_, query) => {
    await buildFrom('cities48.csv');
    const old = await loadSite(site());
    try {
      await serving(
        () => old,
        async (url) => {
          expect(await count(`${url}?page=1`)).toBe(48);
          await buildFrom('cities11.csv');
          expect(await count(url + query)).toBe(48);
        },
      );
    } finally {
      old.release?.(); // (absent before servers read one build)
    }
    const fresh = await loadSite(site());
    try {
      await serving(
        () => fresh,
        async (url) => expect(await count(url + query)).toBe(11),
      );
    } finally {
      fresh.release?.();
    }
  });
});
