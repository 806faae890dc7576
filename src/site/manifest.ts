import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROUTES } from '../core/route-table.js';
import { siteSpec, type SiteSettings, type SiteSpec } from './spec.js';
import { CitiesApiError } from '../core/errors.js';

export const META_DIR = ROUTES.file.meta;
export const MANIFEST_PATH = ROUTES.extras.manifest;
/** The validated dataset, which `serve` loads to answer what no file covers. */
export const DATASET_PATH = ROUTES.extras.dataset;

export interface Manifest {
  readonly generator: string;
  readonly version: string;
  readonly settings: SiteSettings;
  readonly dataset: { readonly count: number; readonly sha256: string };
  /** Every file of the site but the manifest and the `.gz`/`.br` siblings of pages: path -> sha256 (hex) of its bytes. */
  readonly files: Readonly<Record<string, string>>;
}

/** A manifest without its list of files: what a server needs (the list is large for large sites). */
export type ManifestHead = Omit<Manifest, 'files'>;

/** The spec of the site a manifest describes. */
export function specOf(manifest: Pick<ManifestHead, 'settings' | 'dataset'>): SiteSpec {
  return siteSpec(manifest.settings, manifest.dataset.count);
}

const HEAD_BYTES = 64 * 1024;
const FILES_KEY = '\n "files": {';

/**
 * The manifest of a built site without its list of files, read from the file's first bytes
 * (the build writes `files` last), or null when the directory holds none.
 */
export async function readManifestHead(siteDir: string): Promise<ManifestHead | null> {
  let head: string;
  try {
    const file = await open(join(siteDir, MANIFEST_PATH));
    try {
      const { buffer, bytesRead } = await file.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
      head = buffer.toString('utf8', 0, bytesRead);
    } finally {
      await file.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw error;
  }
  const end = head.indexOf(FILES_KEY);
  const manifest = end > 0 && head[end - 1] === ',' ? parseManifest(`${head.slice(0, end)} "files": {}}`, siteDir) : await readManifest(siteDir);
  if (!manifest) return null;
  const { files: _, ...rest } = manifest;
  return rest;
}

/**
 * The manifest's text: one-space indented JSON, `files` last and sorted by path (what
 * readManifestHead relies on), written without building a sorted copy of a large map.
 */
export function manifestJson(head: ManifestHead, files: Readonly<Record<string, string>>, paths: readonly string[] = sortedPaths(files)): string {
  const text = JSON.stringify({ ...head, files: {} }, null, 1);
  if (!paths.length) return `${text}\n`;
  const lines = paths.map((path) => `  ${JSON.stringify(path)}: ${JSON.stringify(files[path])}`);
  return `${text.slice(0, -'{}\n}'.length)}{\n${lines.join(',\n')}\n }\n}\n`;
}

/** The paths of `files` in the manifest's order (by UTF-16 code units, as the file lists them). */
export function sortedPaths(files: Readonly<Record<string, string>>): string[] {
  return Object.keys(files).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The manifest of a built site, or null when the directory holds none. */
export async function readManifest(siteDir: string): Promise<Manifest | null> {
  let text: string;
  try {
    text = await readFile(join(siteDir, MANIFEST_PATH), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw error;
  }
  return parseManifest(text, siteDir);
}

function parseManifest(text: string, siteDir: string): Manifest {
  try {
    const manifest = JSON.parse(text) as Manifest;
    if (manifest.generator !== 'cities-api' || typeof manifest.files !== 'object') throw new Error('not a cities-api manifest');
    return manifest;
  } catch (error) {
    throw new CitiesApiError(`${join(siteDir, MANIFEST_PATH)} is damaged (${(error as Error).message}); delete ${siteDir} and build again`);
  }
}
