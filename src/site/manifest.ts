import { ROUTES } from '../core/route-table.js';
import { siteSpec, type SiteSettings, type SiteSpec } from './spec.js';

export const META_DIR = ROUTES.file.meta;
export const MANIFEST_PATH = ROUTES.extras.manifest;
/** The validated dataset, which `serve` loads to answer what no file covers. */
export const DATASET_PATH = ROUTES.extras.dataset;

export interface Manifest {
  readonly generator: string;
  readonly version: string;
  readonly settings: SiteSettings;
  readonly dataset: { readonly count: number; readonly sha256: string };
  /**
   * The ICU, CLDR and Unicode versions of the Node that built the site (`process.versions`): new
   * collation data may change the order of names, so a site built with other data is rebuilt.
   * Absent in sites built before it was recorded (which are then rebuilt too).
   */
  readonly runtime?: { readonly icu: string; readonly cldr: string; readonly unicode: string };
  /** The format of what the build wrote (SITE_FORMAT, version.ts); absent before 2 (such a site is rebuilt). */
  readonly format?: number;
  /** Every file of the site but the manifest and the `.gz`/`.br` siblings of pages: path -> sha256 (hex) of its bytes. */
  readonly files: Readonly<Record<string, string>>;
}

/** A manifest without its list of files: what a server needs (the list is large for large sites). */
export type ManifestHead = Omit<Manifest, 'files'>;

/** The spec of the site a manifest describes. */
export function specOf(manifest: Pick<ManifestHead, 'settings' | 'dataset'>): SiteSpec {
  return siteSpec(manifest.settings, manifest.dataset.count);
}

/** What precedes the list of files in the manifest's text (manifestJson), so that a reader can stop there. */
export const MANIFEST_FILES_KEY = '\n "files": {';

/** A manifest's files in its order (sorted by path): the `i`th path and its SHA-256 (hex). */
export interface ManifestFiles {
  readonly size: number;
  path(i: number): string;
  hash(i: number): string;
}

/**
 * The manifest's text: one-space indented JSON, `files` last and sorted by path (what
 * readManifestHead relies on), written without building a sorted copy of a large map.
 */
export function manifestJson(head: ManifestHead, files: Readonly<Record<string, string>>): string {
  return [...manifestText(head, sortedFiles(files))].join('');
}

const PIECE_CHARS = 64 * 1024;

/** manifestJson's text in pieces of about 64 KiB, made as they are read: a large site's list is never one string. */
export function* manifestText(head: ManifestHead, files: ManifestFiles): Generator<string> {
  const text = JSON.stringify({ ...head, files: {} }, null, 1);
  if (!files.size) {
    yield `${text}\n`;
    return;
  }
  let piece = `${text.slice(0, -'{}\n}'.length)}{\n`;
  for (let i = 0; i < files.size; i++) {
    piece += `  ${JSON.stringify(files.path(i))}: ${JSON.stringify(files.hash(i))}${i + 1 < files.size ? ',\n' : '\n }\n}\n'}`;
    if (piece.length >= PIECE_CHARS || i + 1 === files.size) {
      yield piece;
      piece = '';
    }
  }
}

/** An object of path -> hash in the manifest's order (by UTF-16 code units, as the file lists them). */
export function sortedFiles(files: Readonly<Record<string, string>>): ManifestFiles {
  const paths = Object.keys(files).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { size: paths.length, path: (i) => paths[i]!, hash: (i) => files[paths[i]!]! };
}
