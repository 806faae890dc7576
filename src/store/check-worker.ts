import type { Silent } from '../proc/channel.js';
import { parentChannel } from '../proc/workers.js';
import { readSiteFiles } from './manifest-file.js';
import { StatCache } from './stat-cache.js';
import { checkShares, type Found } from './stat-check.js';

// The helper thread of a site's check (site-check.ts): reads the manifest and the stat cache
// (while the build's thread reads the dataset), hands both to the build's thread, and checks
// chunks of files until none is left, the build's thread taking chunks too once it is free.

export interface CheckData {
  readonly siteDir: string;
  /** The index of the next chunk of paths to check (an Int32Array's one element). */
  readonly next: SharedArrayBuffer;
}

/** The manifest's paths and the stat cache's records. */
export interface Records {
  readonly paths: readonly string[];
  readonly data: Float64Array;
}

/** site-check.ts and its helper: both calls are answered from work the helper starts at once. */
export interface CheckProtocol {
  readonly data: CheckData;
  readonly parent: Silent;
  readonly worker: {
    /** The records, or null when the site has none (nothing can be checked). */
    readonly calls: { records(): Records | null; found(): Found };
    readonly events: Record<never, never>;
  };
}

const parent = parentChannel<CheckProtocol>();
const { siteDir, next } = parent.data;
const read = (async () => {
  const manifest = await readSiteFiles(siteDir);
  const cache = manifest && (await StatCache.read(siteDir, manifest));
  return manifest && cache ? { manifest, cache } : null;
})();
const found = read.then((site) =>
  site ? checkShares(siteDir, site.manifest.files, site.cache, new Int32Array(next)) : [],
);
// A failure is the answer to both calls: the build's thread then checks on its own, and says what is wrong (a damaged manifest...).
for (const promise of [read, found]) promise.catch(() => undefined);

parent.handle('records', async () => {
  const site = await read;
  return site && { paths: site.manifest.files.pathList(), data: site.cache.data };
});
parent.handle('found', () => found);
