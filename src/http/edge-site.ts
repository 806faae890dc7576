import { CitiesApiError, wordingOf } from '../core/errors.js';
import { ROUTES } from '../core/route-table.js';
import type { OpenedFile, OpenSiteFile } from '../site/edge-blocks.js';
import { RangeIgnored, type ReadRange } from '../site/edge-ranges.js';
import { EdgeSource, type EdgeSourceOptions, type ReadSiteFile } from '../site/edge-source.js';
import { siteSpec, type SiteSettings, type SiteSpec } from '../site/spec.js';
import type { LazySiteContext } from './route-types.js';
import { bodyInto } from './body-into.js';

// The site an edge function answers from: its settings (in the project) and its edge files
// (`_cities-api/edge/`, read through whatever the platform offers: the assets binding, the
// function's own files, the site's CDN). Per request, the spec needs only the index (read once
// per isolate); a computed page reads the rank files of its ordering and the chunks of its cities.

/** What a generated project embeds of its site: the settings only (the cities stay in the site's files). */
export interface EdgeProjectData {
  readonly settings: SiteSettings;
}

/** How long one edge file may take to arrive before the request fails (a clear 500, never a hang). */
export const READ_TIMEOUT_MS = 10_000;

export function edgeSite(
  settings: SiteSettings,
  read: ReadSiteFile,
  options: EdgeSourceOptions & { readonly stream?: boolean } = {},
): LazySiteContext {
  const source = new EdgeSource(timedRead(read), { ...options, ...timedReads(options) });
  let spec: SiteSpec | undefined;
  return {
    async spec() {
      const count = await source.count();
      if (spec?.count !== count) spec = siteSpec(settings, count);
      return spec;
    },
    index: (pairs) => source.indexFor(pairs),
    tag: () => source.tag(),
    // A platform that sends a body only whole (buffered Lambda) assembles it, within its page limit.
    ...(options.stream === false ? {} : { stream: (pairs, baseUrl, parts) => source.stream(pairs, baseUrl, parts) }),
  };
}

/**
 * An edge file read over HTTP (`fetchFile` of its URL under `base`): its bytes on a 200, else a
 * rejection naming the status. Given `into`, the body is read into the arrays `into` gives
 * (body-into.ts), of its Content-Length where it has one: arrayBuffer() gathers the chunks and
 * copies them into a new array. A body in another encoding than the file's (Content-Encoding) is
 * read with arrayBuffer().
 */
export function httpRead(fetchFile: (request: Request) => Promise<Response>, base: string): ReadSiteFile {
  return async (path, into, signal) => {
    const response = await fetchFile(new Request(new URL(`/${path}`, base), signal && { signal }));
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`HTTP ${response.status}`);
    }
    if (!into || !response.body || response.headers.has('content-encoding'))
      return new Uint8Array(await response.arrayBuffer());
    const length = Number(response.headers.get(ROUTES.header.contentLength) ?? Number.NaN);
    return bodyInto(response.body, into, Number.isSafeInteger(length) ? length : undefined);
  };
}

/**
 * Part of an edge file read over HTTP with a Range header: the body of a 206 (its Content-Range
 * checked); the whole file where the server sends it all (200) as RangeIgnored; else a rejection.
 */
export function httpRange(fetchFile: (request: Request) => Promise<Response>, base: string): ReadRange {
  return async (path, start, end, _into, signal) => {
    const headers = { range: `bytes=${start}-${end - 1}` };
    const response = await fetchFile(new Request(new URL(`/${path}`, base), { headers, ...(signal && { signal }) }));
    const from = /^bytes (\d+)-/.exec(response.headers.get('content-range') ?? '')?.[1];
    if (response.status === 206 && Number(from) === start) return new Uint8Array(await response.arrayBuffer());
    if (response.status === 200) throw new RangeIgnored(new Uint8Array(await response.arrayBuffer()));
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status} ${response.headers.get('content-range') ?? ''} for a range`);
  };
}

/** A platform's whole-file reads, each bounded in time (explained). */
export function timedRead(read: ReadSiteFile): ReadSiteFile {
  return (path, into) => explained(path, (signal) => read(path, into, signal));
}

/**
 * A platform's opens and ranges, each bounded in time (explained); so is every read of a file held
 * open, whose handle is closed when one is given up (its read then fails rather than keep going).
 */
export function timedReads({
  open,
  readRange,
}: Pick<EdgeSourceOptions, 'open' | 'readRange'>): Pick<EdgeSourceOptions, 'open' | 'readRange'> {
  const opened: OpenSiteFile | undefined =
    open &&
    (async (path) => {
      const file = onceClosed(
        await explained(
          path,
          (signal) => open(path, signal),
          (late) => late.close(),
        ),
      );
      const timed = <T>(read: () => Promise<T>) => explained(path, read, undefined, file.close);
      return {
        range: (start, end) => timed(() => file.range(start, end)),
        read: (into) => timed(() => file.read(into)),
        close: file.close,
      };
    });
  return {
    ...(opened && { open: opened }),
    ...(readRange && {
      readRange: (path, start, end, into) => explained(path, (signal) => readRange(path, start, end, into, signal)),
    }),
  };
}

/** A file whose close closes it once (a read given up closes it; the page closes it again when done). */
function onceClosed(file: OpenedFile): OpenedFile {
  let closed = false;
  const close = () => {
    if (!closed) [closed] = [true, file.close()];
  };
  return { range: (start, end) => file.range(start, end), read: (into) => file.read(into), close };
}

/**
 * A platform's read (or open) of one edge file, bounded in time, its failures told as what the
 * deployer should do. Given up, its signal is aborted (a fetch, a Deno read stop), `givenUp` is
 * called (a file held open closed), and what it still gives is handed to `late` (a file opened
 * too late closed).
 */
function explained<T>(
  path: string,
  start: (signal: AbortSignal) => Promise<T>,
  late?: (value: T) => void,
  givenUp?: () => void,
): Promise<T> {
  const aborted = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`no answer in ${READ_TIMEOUT_MS / 1000} s`);
      aborted.abort(error);
      givenUp?.();
      reject(error);
    }, READ_TIMEOUT_MS);
  });
  const reading = Promise.resolve().then(() => start(aborted.signal));
  if (late) reading.then((value) => aborted.signal.aborted && late(value)).catch(() => undefined);
  return Promise.race([reading, timeout])
    .catch((error: unknown) => {
      // The whole file for a range: the reader takes it as a block.
      if (error instanceof RangeIgnored) throw error;
      // A file system's error code rather than its message, which would tell clients the function's paths.
      const code = (error as { code?: unknown } | null)?.code;
      const why = typeof code === 'string' ? code : wordingOf(error);
      throw new CitiesApiError(
        `the edge file ${path} could not be read (${why}): deploy the site's ${ROUTES.edge.dir}/ files (from the same build) with the function`,
      );
    })
    .finally(() => clearTimeout(timer));
}
