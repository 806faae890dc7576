import { closeSync, openSync, readSync } from 'node:fs';
import { CitiesApiError } from '../core/errors.js';
import { resultOffsets } from '../core/json-text.js';
import { orderingKey } from '../core/ordering.js';
import { onePageIndex, pageOf, type PageIndex } from '../core/page.js';
import type { QueryPair } from '../core/query-string.js';

/** An ordering's page of every city, written: its file, and the dataset positions in its order. */
export interface AllPageFile {
  readonly file: string;
  readonly order: Uint32Array;
}

const OPEN = 0x5b;
const COMMA = 0x2c;
const CLOSE = 0x5d;

/**
 * A build's pages answered from its pages of every city once those are written: a page's cities
 * are one run of its ordering's page of every city, read back with one read (from the page
 * cache), so the dataset need not be held while the other pages are written. Keeps one file
 * open, with where each city of it lies (8 bytes a city); a page is read in one buffer.
 */
export class AllPageReader {
  private open:
    | { readonly key: string; readonly file: string; readonly fd: number; readonly at: Float64Array }
    | undefined;

  /** `lengths`: each city's serialized length, by dataset position; `files`: by ordering key. */
  constructor(
    private readonly count: number,
    private readonly lengths: Uint32Array,
    private readonly files: ReadonlyMap<string, AllPageFile>,
  ) {}

  /** An index answering the page `pairs` ask for (only it), its cities read back. */
  indexFor(pairs: readonly QueryPair[]): PageIndex {
    const page = pageOf(this.count, pairs);
    // No page (404), or the one empty page of an empty dataset: nothing to read.
    if (!page || page.slice.start === page.slice.end) return onePageIndex(this.count, page, () => new Uint8Array(0));
    const { file, fd, at } = this.fileOf(orderingKey(page.ordering));
    const { start, end } = page.slice;
    // From the byte before the first city (`[` or `,`) to the one after the last (`,` or `]`).
    const from = at[start]! - 1;
    const bytes = Buffer.allocUnsafe(at[end]! - from);
    for (let done = 0; done < bytes.length; ) {
      const read = readSync(fd, bytes, done, bytes.length - done, from + done);
      if (!read) throw changedError(file);
      done += read;
    }
    if ((bytes[0] !== OPEN && bytes[0] !== COMMA) || (bytes.at(-1) !== COMMA && bytes.at(-1) !== CLOSE))
      throw changedError(file);
    return onePageIndex(this.count, page, (i) => bytes.subarray(at[start + i]! - from, at[start + i + 1]! - 1 - from));
  }

  close(): void {
    if (this.open) closeSync(this.open.fd);
    this.open = undefined;
  }

  private fileOf(key: string): { file: string; fd: number; at: Float64Array } {
    if (this.open?.key === key) return this.open;
    const all = this.files.get(key);
    if (!all) throw new CitiesApiError(`internal error: no page of every city was written for the ordering ${key}`);
    this.close();
    const { lengths } = this;
    // The page of every city is the first and only one: no links.
    const at = resultOffsets(this.count, 'null', 'null', this.count, (i) => lengths[all.order[i]!]!);
    this.open = { key, file: all.file, fd: openSync(all.file, 'r'), at };
    return this.open;
  }
}

function changedError(file: string): CitiesApiError {
  return new CitiesApiError(
    `cannot build: ${file} no longer holds the cities this build wrote there (was it changed during the build?); build again`,
  );
}
