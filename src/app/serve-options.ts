import type { ServerLimits } from '../http/limits.js';
import type { BuildOptions } from './build-options.js';

/**
 * serve()'s options; `collation`, `pageSizes` and `orderings` are build()'s, for when it builds from `data` (each absent
 * one: the site's own, else the build's default), and `durable`, for each of its builds (--data, --watch, --writable's).
 */
export interface ServeOptions
  extends Pick<
    BuildOptions,
    'collation' | 'pageSizes' | 'orderings' | 'durable' | 'dataName' | 'strict' | 'onWarning'
  > {
  /** The site directory: served as built, or (re)built first from `data` (default `dist`). */
  readonly dir?: string | undefined;
  readonly data?: string | undefined;
  /** Where links point; default: the site's own base URL, or this server's URL when building. */
  readonly baseUrl?: string | undefined;
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  /** Accept POST (needs `data` and `token`). */
  readonly writable?: boolean | undefined;
  readonly token?: string | undefined;
  /** Rebuild when the dataset file changes (needs `data`). */
  readonly watch?: boolean | undefined;
  /** How long a POST or a rebuild waits for a lock another process holds (the site's build lock, the dataset's), in ms; default DEFAULT_LOCK_WAIT (10 s, build-options.ts). */
  readonly lockWait?: number | undefined;
  /** Timeouts, header size and memory for answers; each defaults to DEFAULT_LIMITS' (see server-limits.ts). */
  readonly limits?: Partial<ServerLimits> | undefined;
  /** Also answer GET/HEAD of the site's file paths with the answer each stands for: the origin a CDN fails over to when its copy of the site lacks a file. */
  readonly failoverOrigin?: boolean | undefined;
  readonly log?: (line: string) => void;
  /**
   * Told the request log (a line per answered request, in the Common Log Format: client, time,
   * request, status, size; then ms) in batches: the lines of up to 64 KiB or 1 s joined by
   * newlines (LogBuffer); none when absent.
   */
  readonly requestLog?: ((line: string) => void) | undefined;
  /** Answer `/` (a page linking the API) and `/openapi.json` (the site's), which the reference answers with a 404 (default true). */
  readonly previewPages?: boolean | undefined;
  /**
   * Server processes answering requests (node:cluster), each from the whole site; 'auto': one per
   * CPU. Default 1: this process. With more, this process is the one writer (builds, --watch,
   * --writable's commits) and every worker answers from the new site before a rebuild is reported.
   */
  readonly workers?: number | 'auto' | undefined;
  /**
   * Told the first build's progress (reading the dataset, then pages), as build() tells it: serve --data prints it while
   * requests wait for the site. Its `signal` aborts that build as build()'s does (serve() then rejects, the site as it was).
   */
  readonly firstBuild?: Pick<BuildOptions, 'onRead' | 'onStart' | 'onProgress' | 'signal'> | undefined;
}
