import { ROUTES } from '../../core/route-table.js';
import { KEPT, type PlatformCache } from '../../http/edge-cache.js';
import type { ReadSiteFile } from '../../site/edge-source.js';
import { RangeIgnored, type ReadRange } from '../../site/edge-ranges.js';

// Ranged reads of edge blocks on Cloudflare. The assets binding sends whole files (its asset
// Worker has no Range support: a block of which a page needs three cities costs up to 480 KB),
// but the zone's cache does ("Range: results in a 206 response if a matching response is found",
// Cloudflare's Cache API reference). So a block is read whole from the assets once, put in the
// cache under the build's tag, and every range of it is then asked of the cache, by any isolate
// of the location. Where the cache keeps nothing (workers.dev), ranges stop: whole blocks, as before.

const { header } = ROUTES;

export function cachedRanges(
  readWhole: ReadSiteFile,
  cache: PlatformCache,
  /** Where keys live: the Worker's own origin (a zone's cache is keyed by URL). */
  origin: () => string,
  /** The build's tag (the edge index's): a new deploy never reads the old one's entries. */
  tag: () => Promise<string>,
): ReadRange {
  const filling = new Map<string, Promise<Uint8Array>>();
  /** Keys this isolate put in the cache: one missing later means the cache keeps nothing (or evicted it). */
  const put = new Set<string>();
  let inert = false;

  const fill = async (path: string, key: string): Promise<Uint8Array> => {
    const bytes = await readWhole(path);
    // Kept by shared caches only: a key names one build's file, so an entry never goes stale.
    const headers = { [header.cacheControl]: KEPT, [header.contentLength]: String(bytes.length) };
    // Awaited: the ranges this page reads next are asked of the cache.
    await cache.put(new Request(key), new Response(bytes, { headers })).then(
      () => put.add(key),
      () => undefined,
    );
    return bytes;
  };

  return async (path, start, end) => {
    const key = `${origin()}/${ROUTES.edge.dir}/blocks/${await tag()}/${path}`;
    if (!inert) {
      // null: not there; undefined: the cache refused (a plan's limit on Cache API calls per request).
      const asked = new Request(key, { headers: { range: `bytes=${start}-${end - 1}` } });
      const hit = await cache.match(asked).then(
        (r) => r ?? null,
        () => undefined,
      );
      const part = hit && (await rangeOf(hit, start, end).catch(() => undefined));
      if (part) return part;
      if (hit === null && put.has(key)) inert = true;
    }
    let whole = filling.get(key);
    if (!whole) {
      whole = fill(path, key).finally(() => filling.delete(key));
      filling.set(key, whole);
    }
    const bytes = await whole;
    // The reader then keeps this block whole and asks for no more ranges.
    if (inert) throw new RangeIgnored(bytes);
    return bytes.slice(start, end);
  };
}

/** The bytes [start, end) of a cache hit: its body when a 206 from `start`, else cut from the whole file sent (else none: read from the assets). */
async function rangeOf(hit: Response, start: number, end: number): Promise<Uint8Array | undefined> {
  const bytes = new Uint8Array(await hit.arrayBuffer());
  const from = /^bytes (\d+)-/.exec(hit.headers.get('content-range') ?? '')?.[1];
  if (hit.status === 206 && Number(from) === start) return bytes;
  if (hit.status === 200) return bytes.slice(start, end);
  return undefined;
}
