import { FileCache } from './file-cache.js';
import { openSiteFiles, type FileHandler } from './site-files.js';
import type { ManifestHead } from '../site/manifest.js';
import { noSiteIn, readManifestHead } from '../store/manifest-file.js';
import { siteSpec } from '../site/spec.js';
import { JSON_HEADERS, type SiteContext } from './route-types.js';
import { indexOf, readSiteData, type SiteData } from './site-data.js';
import type { Collation } from '../core/collation.js';
import type { WasmMemory } from './page-memory.js';
import type { SiteLease, SiteMemories } from './site-memories.js';

/** Lets other work run (the requests of the site answered meanwhile) between steps of a long one. */
export const pause = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export type { FileHandler } from './site-files.js';

/** What the server answers from: a built site's files (through sirv) and its dataset in memory. */
export interface LoadedSite {
  readonly manifest: ManifestHead;
  readonly context: SiteContext;
  readonly files: FileHandler;
  /** sirv's answers kept in memory. */
  readonly cache: FileCache;
  /** Lets the site's files go: call once nothing reads them any more (a newer site is answered). */
  release(): void;
  /** Its hold on the memory its dataset lies in (answers still read it), when loaded with SiteMemories. */
  readonly lease?: SiteLease;
}

/**
 * How a site's data is read and ranked: here (readSiteData), or in a thread (site-data-thread.ts);
 * `into`, as readSiteData's. `prepare`, if any: called as a build begins, to make ready what the
 * read after it needs (a thread started then, not at the read). `close`, if any: called as the
 * server that reads with it closes (LiveSite.close), resolving once nothing of it runs.
 */
export type ReadSite = ((root: string, collation: Collation, into?: WasmMemory) => Promise<SiteData>) & {
  readonly prepare?: () => void;
  readonly close?: () => Promise<void>;
};

const readHere: ReadSite = (root, collation, into) => readSiteData(root, collation, 'async', into);

/**
 * The site in `dir` as one build made it: its manifest, dataset and files all read through the
 * same directory (site-files.ts). Its dataset is read and every field ranked by `read`, before
 * the site is answered: no request waits for it. With `memories`, into a memory of theirs that
 * a replaced site left (else a new one), which the site's lease gives back once it is over.
 */
export async function loadSite(dir: string, read: ReadSite = readHere, memories?: SiteMemories): Promise<LoadedSite> {
  const pinned = openSiteFiles(dir);
  const into = memories?.take();
  let lease: SiteLease | undefined;
  try {
    const manifest = await readManifestHead(pinned.root);
    if (!manifest) throw noSiteIn(dir, 1);
    const data = await read(pinned.root, manifest.settings.collation, into);
    if (into && data.memory !== into) memories!.give(into);
    lease = memories?.lease(data.memory);
    const index = indexOf(data, manifest.settings.collation);
    const context: SiteContext = { spec: siteSpec(manifest.settings, index.count), index, tag: data.tag };
    const { files } = pinned;
    const cache = new FileCache(files, JSON_HEADERS);
    return { manifest, context, files, cache, release: () => pinned.release(), lease };
  } catch (error) {
    pinned.release();
    // Failed: its memory, or the one it took, read by nothing.
    if (lease) lease.end();
    else if (into) memories!.give(into);
    const path = (error as { path?: unknown }).path;
    if (typeof path === 'string') (error as { path: string }).path = pinned.named(path);
    throw error;
  }
}
