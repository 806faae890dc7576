#!/usr/bin/env node
// Run by bench-edge.mjs as `node --max-old-space-size=128 scripts/bench/edge-memory.mjs SITE N QUERY PAGES [one-by-one]`:
// the edge fetch core (the handler every platform adapter wraps) over a built site's edge files read
// from disk (into the arrays the reader gives, as files held open are on Deno), N concurrent GETs of
// QUERY (pages 1..PAGES in turn; with one-by-one, each after the one before) read to the end by
// slow clients (a chunk at a time, a tick between chunks), in an old space as small as an isolate's 128 MB. Prints
// one JSON line: the process's RSS and its JS heap + ArrayBuffers before (after the one-time reads)
// and at their peak, sampled every 5 ms, and whether every answer was a complete 200.
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';

const [site, n, query, pages, how] = process.argv.slice(2);
const lib = (path) => import(join(import.meta.dirname, '..', '..', 'lib', path));
const [{ createFetchHandler }, { edgeSite }, { readManifestHead }] = await Promise.all(
  ['http/fetch-handler.js', 'http/edge-site.js', 'store/manifest-file.js'].map(lib),
);
const { settings } = await readManifestHead(site);
const handler = createFetchHandler({
  site: edgeSite(settings, async (path, into) => {
    if (!into) return new Uint8Array(await readFile(join(site, path)));
    const file = await open(join(site, path));
    try {
      const { size } = await file.stat();
      const bytes = into(size).subarray(0, size);
      return bytes.subarray(0, (await file.read(bytes, 0, size, 0)).bytesRead);
    } finally {
      await file.close();
    }
  }),
});
const url = (page) => `https://bench.invalid/cities/?${query}&page=${page}`;
const used = () => {
  const m = process.memoryUsage();
  return { rss: m.rss, js: m.heapUsed + m.arrayBuffers };
};
const drain = async (response) => {
  let bytes = 0;
  for await (const chunk of response.body) {
    bytes += chunk.length;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return bytes;
};
// The one-time reads (index, rank files), then the baseline.
await drain(await handler(new Request(url(1).replace(/page_size=\d+/, 'page_size=1'))));
globalThis.gc?.();
const before = used();
const peak = { ...before };
const timer = setInterval(() => {
  const now = used();
  peak.rss = Math.max(peak.rss, now.rss);
  peak.js = Math.max(peak.js, now.js);
}, 5);
const ask = async (i) => {
  const response = await handler(new Request(url((i % Number(pages)) + 1)));
  return { status: response.status, bytes: await drain(response) };
};
const results = [];
if (how === 'one-by-one') for (let i = 0; i < Number(n); i++) results.push(await ask(i));
else results.push(...(await Promise.all(Array.from({ length: Number(n) }, (_, i) => ask(i)))));
clearInterval(timer);
console.log(JSON.stringify({ before, peak, results }));
