import { ROUTES } from '../../core/route-table.js';
import type { Into } from '../../site/byte-pool.js';
import type { OpenedFile } from '../../site/edge-blocks.js';
import { createFetchHandler } from '../../http/fetch-handler.js';
import { edgeSite, type EdgeProjectData } from '../../http/edge-site.js';
import { pageCapOptions, type PageCapOptions } from '../page-cap.js';
import { readByDenoServer } from './native-reader.js';
import { sitePageFile, siteRoot, type DenoFile, type DenoFileInfo, type DenoPageFiles } from './page-files.js';

export type { DenoFile } from './page-files.js';

// `deno serve` (Deno Deploy, a Deno server): the module's default export is `{ fetch }`; a covered
// query whose page file the site holds is answered with that file's stream (page-files.ts), every
// other answer computed from the site's edge files, read from the site's directory shipped with the
// entry (main.js written by `cities-api edge deno`). Self-hosted, the site may be rebuilt under the
// server: the index file's inode and mtime are looked at before each request (a new build is read
// from the next request on), and a page's files are held open while it is sent, so a request
// started on one build finishes on it although the build removes the old tree.

/** The part of the `Deno` namespace the server uses (lstat and realPath: a page file sent; a stand-in may leave them out). */
export interface DenoFiles extends Partial<Pick<DenoPageFiles, 'lstat' | 'realPath'>> {
  readFile(path: URL, options?: { signal?: AbortSignal }): Promise<Uint8Array>;
  stat(path: URL): Promise<DenoFileInfo & { mtime: Date | null }>;
  open(path: URL): Promise<DenoFile>;
}

/** `files`: the site's directory (a URL ending in /); `deno`: the Deno namespace; `options`: a cap on computed pages (page-cap.ts). */
export function denoServer(
  data: EdgeProjectData,
  deno: DenoFiles,
  files: URL,
  options: PageCapOptions = {},
): { fetch(request: Request): Promise<Response> } {
  const at = (path: string) => new URL(path, files);
  // A read given up (edge-site.ts) is aborted; a file held open whose read is given up is closed.
  const site = edgeSite(data.settings, (path, _into, signal) => deno.readFile(at(path), signal && { signal }), {
    indexVersion: async () => {
      const { ino, mtime, size } = await deno.stat(at(ROUTES.edge.index));
      return `${ino}:${mtime?.getTime()}:${size}`;
    },
    open: async (path) => openedFile(await deno.open(at(path))),
    ...pageCapOptions(options, 'this server', 'main.js', "Deno Deploy's free plan stops a request at 50 ms of CPU"),
  });
  const openapi = () => deno.readFile(at(ROUTES.extras.openapi));
  const { lstat, realPath } = deno;
  const named: DenoPageFiles | undefined = lstat &&
    realPath && { open: (url) => deno.open(url), lstat: (url) => lstat(url), realPath: (url) => realPath(url) };
  // The site's real path looked up once per build, each page's directory's per request.
  const root = named && siteRoot(named, files);
  const pageFile = named && ((path: string, tag: string) => sitePageFile(named, files, path, root!(tag)));
  return { fetch: createFetchHandler({ site, openapi, pageFile, nativeReader: readByDenoServer }) };
}

/** A Deno file as an OpenedFile: its reads one after the other, none of their bytes kept once handed out. */
export function openedFile(file: DenoFile): OpenedFile {
  // A seek and its reads one after the other: a page may read several ranges of one file at once.
  // The queue settles to nothing: holding the last read's bytes, each of a page's files (all held
  // open while it is sent) kept its block alive, a page_size=200000 answer its 70 MB of blocks.
  let queue: Promise<void> = Promise.resolve();
  const readAt = (start: number, end: number, into?: Into) => {
    const reading = queue.then(() => seekRead(start, end, into));
    queue = reading.then(
      () => undefined,
      () => undefined,
    );
    return reading;
  };
  const seekRead = async (start: number, end: number, into?: Into) => {
    const bytes = (into ? into(end - start) : new Uint8Array(end - start)).subarray(0, end - start);
    await file.seek(start, 0);
    let filled = 0;
    while (filled < bytes.length) {
      const n = await file.read(bytes.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    return bytes.subarray(0, filled);
  };
  return {
    range: (start, end) => readAt(start, end),
    read: async (into) => readAt(0, (await file.stat()).size, into),
    close: () => file.close(),
  };
}
