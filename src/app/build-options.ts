import type { Collation } from '../core/collation.js';
import type { DatasetRead } from '../dataset/as-read.js';
import type { Problem } from '../core/errors.js';
import type { Compression, Host } from '../site/spec.js';
import type { SiteCheck } from '../store/site-check.js';
import type { WriteStats } from '../store/site-writer.js';

// What build() is given, what it plans once the dataset is read, and what it returns: the
// library's contract, also what crosses to the thread a large build runs in (build-thread.ts).

/**
 * How long a POST, a build or a fold waits for a lock another process holds (the dataset's, the
 * site's) when `lockWait` is not given, in ms; the CLI's --lock-wait default (in seconds) is this.
 */
export const DEFAULT_LOCK_WAIT = 10_000;

/** A preview's build (serve --data without --base-url): what preview-guard.ts checks it against. */
export interface Preview {
  /** The site directory, as the user named it. */
  readonly dir: string;
  /** The dataset file. */
  readonly data: string;
  /** The preview's base URL (its server's own). */
  readonly url: string;
}

export interface BuildOptions {
  /** Dataset file, `.csv` or `.json`. */
  readonly data: string;
  /** How messages name the dataset: the path as the user gave it (default: `data`). */
  readonly dataName?: string | undefined;
  /** Refuse dataset columns (CSV) or keys (JSON) that are not city fields; by default they are ignored with one warning (onWarning). */
  readonly strict?: boolean | undefined;
  /** Site directory to (re)build (default `dist`). */
  readonly out?: string | undefined;
  /** URL the API is published at, for next/previous links (default http://localhost:8080: a local preview; the plan says so). */
  readonly baseUrl?: string | undefined;
  /** Text order (default `locale`: ICU per language). */
  readonly collation?: Collation | undefined;
  /** Page sizes precomputed besides the default one (default 10, 20, 50, 100). */
  readonly pageSizes?: readonly number[] | undefined;
  /** Orderings to precompute (default: all 33). */
  readonly orderings?: readonly string[] | undefined;
  /**
   * How the `.gz`/`.br` beside each page are made: `fast` (default: gzip 6, brotli 2), `best`
   * (gzip 9, brotli 11: about a quarter fewer brotli bytes for about 100 times the CPU), or
   * `none` (no `.gz`/`.br`). Rebuilding at another level rewrites every `.gz`/`.br` and only them.
   */
  readonly compression?: Compression | undefined;
  /** @deprecated `compress: false` is `compression: 'none'` (and contradicts any other level). */
  readonly compress?: boolean | undefined;
  /** The live server (`cities-api serve`) static hosts send what no file covers to. */
  readonly liveUrl?: string | undefined;
  /**
   * The one host the site is for (`cloudflare`): its files only, no `.gz`/`.br`, and as many of
   * each list's first pages as fit the host's file budget (the others are computed live).
   */
  readonly host?: Host | undefined;
  /** Refuse to build a site of more files than this (default 1,000,000). */
  readonly maxFiles?: number;
  /** Rewrite every file, reusing nothing of the old site. */
  readonly force?: boolean;
  /** Sync every file written, then the new tree's directories, before the swap: durable against a power loss, not only a kill. */
  readonly durable?: boolean;
  /** Bytes the build leaves free on the site's filesystem (default: 5 % of it, at most 1 GB). */
  readonly minFree?: number | undefined;
  /** How long the build waits for the dataset's lock (a writable server adding cities) or the site's (another build of it), in ms; default DEFAULT_LOCK_WAIT (10 s). */
  readonly lockWait?: number | undefined;
  /** The working directory of whoever asked (default: the process's): a build never replaces it. */
  readonly cwd?: string;
  /**
   * Build at the lowest priority (serve's rebuilds, while it answers from the old site): a build
   * in a thread of its own (a dataset of 1 MB or more) runs at nice 19, and the writer threads it
   * starts with it, so that the threads answering requests keep the CPU.
   */
  readonly background?: boolean | undefined;
  /** Called while the dataset is read: bytes read so far, and the file's size. */
  readonly onRead?: (bytesRead: number, bytes: number) => void;
  /**
   * Stops the build: it rejects with a CitiesApiError saying so, the site as it was and the files
   * written so far removed. Once every page is written the build completes.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * Told, a line each, what the build does beside the site: cities a writable server logged
   * (`.NAME.wal`) folded into the dataset file first, the site's behind marker removed.
   */
  readonly log?: ((line: string) => void) | undefined;
  /** Told what is not wrong enough to refuse the dataset (the unknown columns it ignored), located as a problem is. */
  readonly onWarning?: ((warning: Problem) => void) | undefined;
  /** Called once the dataset is valid, before anything is written. */
  readonly onStart?: (plan: BuildPlan) => void;
  readonly onProgress?: (pagesDone: number, pages: number) => void;
}

/**
 * What a build's swap checks (behind-site.ts), under the lock of `dataset`, waited for up to
 * `lockWait` ms: the dataset against what the build read (`read`, as-read.ts), and the site
 * against what it was when the build read (`site`, siteSignature; null: not known, then only a
 * build of the whole dataset as it is at the swap is swapped in). Plain data: it crosses to a build's thread.
 */
export interface SwapCheck {
  readonly dataset: string;
  readonly read: DatasetRead;
  readonly site: string | null;
  readonly lockWait: number;
}

/**
 * build()'s options, its site directory given or defaulted; and serve's: a preview's first build
 * (preview-guard.ts), the swap's check, and whether the caller holds the site's lock already
 * (buildCurrent: from before it read the dataset), which the build then does not take.
 */
export type SiteBuildOptions = BuildOptions & {
  readonly out: string;
  readonly preview?: Preview | undefined;
  readonly swapCheck?: SwapCheck | undefined;
  readonly siteLocked?: boolean | undefined;
};

export interface BuildPlan {
  readonly cities: number;
  readonly pages: number;
  /** Files the site will hold, compressed siblings included. */
  readonly files: number;
  /** Estimated bytes of the pages, and of their `.gz`/`.br` siblings (0 when up to date: not sampled). */
  readonly jsonBytes: number;
  readonly compressedBytes: number;
  /** The dataset, settings and version are those the site was built from and its files are as built: nothing to write. */
  readonly upToDate: boolean;
  /** When the input is the site's (and not --force): how its files compare with what the build left. */
  readonly check: SiteCheck | null;
  /** The site directory, symbolic links resolved: where the files are written. */
  readonly dir: string;
  /** No base URL was given: links point at the default, http://localhost:8080 (fine for a preview, not for a deployment). */
  readonly defaultBaseUrl: boolean;
}

export interface BuildResult extends WriteStats, BuildPlan {
  readonly seconds: number;
  /**
   * When the files were swapped in with the dataset's log checked (a dataset a writable server adds
   * cities to): how many cities were logged since the build read it, which its files lack (build
   * again to include them), and whether the site was marked behind them (`_cities-api/behind`: a
   * writable server of this site serves them live).
   */
  readonly sinceRead?: SwapOutcome;
}

/** What a build's swap found (behind-site.ts): the cities logged since its read, not in its files, and whether the site was marked behind. */
export interface SwapOutcome {
  readonly cities: number;
  readonly marked: boolean;
}
