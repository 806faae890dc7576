import type { Into } from '../../site/byte-pool.js';
import type { ReadRange } from '../../site/edge-ranges.js';
import type { ReadSiteFile } from '../../site/edge-source.js';
import { edgeSite, type EdgeProjectData } from '../../http/edge-site.js';
import type { LazySiteContext } from '../../http/route-types.js';

// The function's own files (its package, unzipped by Lambda on the instance's disk) read by
// position: each opened once and held for the instance's life, as the package never changes
// under a running function, so a page's cities are a few small reads (pread) with no open or
// close per request. The handles come from the entry module (node:fs/promises' open): the edge
// bundle imports no Node module. At most HELD_FILES are held at once (Lambda allows 1,024 file
// descriptors; at 140k cities the package is ~310 files), the least recently used closed first,
// once no read of it is under way. A read given up (edge-site.ts: its signal aborted) reads no
// further part, and its file is let go (closed once its reads end; the next read opens it again).

/** The part of node:fs/promises' FileHandle read here. */
export interface PositionalFile {
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number }>;
  close(): Promise<void>;
}

/** Opens one of the function's files by its path relative to the package's root. */
export type OpenFile = (path: string) => Promise<PositionalFile>;

/** Files held open at once: well under Lambda's 1,024 descriptors, over the ~310 of a 140k-city package. */
export const HELD_FILES = 768;

interface Held {
  readonly file: Promise<PositionalFile>;
  reading: number;
  dropped: boolean;
}

/**
 * The site as the function reads it from its package, which holds one layout of the cities (the
 * default ordering's: recipe.ts): a page of another ordering is gathered from it by position,
 * through files held open where the entry gives `open` (an entry written before it did reads
 * whole blocks: the same answers, more bytes read).
 */
export function packageSite(
  data: EdgeProjectData,
  read: ReadSiteFile,
  open: OpenFile | undefined,
  options: Parameters<typeof edgeSite>[2],
): LazySiteContext {
  const files = open && heldFiles(open);
  return edgeSite(data.settings, files?.read ?? read, {
    ...options,
    oneLayout: true,
    ...(files && { readRange: files.readRange }),
  });
}

/** Whole files and ranges of the function's files, read through handles held open. */
export function heldFiles(open: OpenFile, most = HELD_FILES): { read: ReadSiteFile; readRange: ReadRange } {
  const held = new Map<string, Held>();
  const close = (entry: Held) => void entry.file.then((f) => f.close()).catch(() => undefined);
  const use = async <T>(
    path: string,
    work: (file: PositionalFile) => Promise<T>,
    signal: AbortSignal | undefined,
  ): Promise<T> => {
    let entry = held.get(path);
    if (entry) held.delete(path);
    else {
      entry = { file: open(path), reading: 0, dropped: false };
      // A file that cannot be opened is not kept: the next request tries again.
      const opening = entry;
      opening.file.catch(() => held.get(path) === opening && held.delete(path));
    }
    // The most recently used last; the least recently used dropped, closed once its reads are done.
    held.set(path, entry);
    for (const [name, old] of held) {
      if (held.size <= most) break;
      held.delete(name);
      old.dropped = true;
      if (old.reading === 0) close(old);
    }
    entry.reading++;
    const used = entry;
    const giveUp = () => {
      if (held.get(path) === used) held.delete(path);
      used.dropped = true;
    };
    signal?.addEventListener('abort', giveUp);
    try {
      return await work(await entry.file);
    } finally {
      signal?.removeEventListener('abort', giveUp);
      if (--entry.reading === 0 && entry.dropped) close(entry);
    }
  };
  return {
    read: (path, into?: Into, signal?: AbortSignal) =>
      use(
        path,
        async (file) => {
          const { size } = await file.stat();
          return filled(file, (into ? into(size) : new Uint8Array(size)).subarray(0, size), 0, signal);
        },
        signal,
      ),
    readRange: (path, start, end, into, signal) =>
      use(
        path,
        (file) =>
          filled(
            file,
            (into ? into(end - start) : new Uint8Array(end - start)).subarray(0, end - start),
            start,
            signal,
          ),
        signal,
      ),
  };
}

/** `bytes` filled from `position` on, or up to the file's end: the bytes read (none more once `signal` is aborted). */
async function filled(
  file: PositionalFile,
  bytes: Uint8Array,
  position: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  let done = 0;
  while (done < bytes.length) {
    signal?.throwIfAborted();
    const { bytesRead } = await file.read(bytes, done, bytes.length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return bytes.subarray(0, done);
}
