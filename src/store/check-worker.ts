import { parentPort, workerData } from 'node:worker_threads';
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

export type CheckMessage =
  | { readonly kind: 'records'; readonly paths: readonly string[]; readonly data: Float64Array }
  | { readonly kind: 'none' }
  | { readonly kind: 'done'; readonly found: Found }
  | { readonly kind: 'failed' };

const { siteDir, next } = workerData as CheckData;
const post = (message: CheckMessage) => parentPort!.postMessage(message);

try {
  const manifest = await readSiteFiles(siteDir);
  const cache = manifest && (await StatCache.read(siteDir, manifest));
  if (!manifest || !cache) post({ kind: 'none' });
  else {
    post({ kind: 'records', paths: manifest.files.pathList(), data: cache.data });
    post({ kind: 'done', found: await checkShares(siteDir, manifest.files, cache, new Int32Array(next)) });
  }
} catch {
  // The build's thread checks on its own, and says what is wrong (a damaged manifest...).
  post({ kind: 'failed' });
}
