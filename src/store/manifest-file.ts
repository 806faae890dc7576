import { statSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { CitiesApiError, optionNamed } from '../core/errors.js';
import { MANIFEST_FILES_KEY, MANIFEST_PATH, type Manifest, type ManifestHead } from '../site/manifest.js';
import { FileList } from '../fs/file-list.js';
import { withPath } from '../fs/fs-error.js';

// Reading a built site's manifest: whole (the build, comparing files), or its head (a server).

/** A built site's manifest with its files held compactly, in the manifest's order (by path). */
export interface SiteFiles extends ManifestHead {
  readonly files: FileList;
}

const HEAD_BYTES = 64 * 1024;

/**
 * What a server says of a directory that holds no site (readManifestHead() found none): a
 * dataset file given where the site goes is told to be given as the dataset instead.
 */
export function noSiteIn(dir: string, exitCode: 1 | 2): CitiesApiError {
  const file = statSync(dir, { throwIfNoEntry: false })?.isFile();
  return new CitiesApiError(
    file
      ? `${dir} is a file, not a site directory: to serve a dataset, give it with ${optionNamed('data')} ${dir}`
      : `${dir} holds no cities-api site: build it first (cities-api build), or pass ${optionNamed('data')} to build it now`,
    exitCode,
  );
}

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
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return null;
    throw withPath(error, join(siteDir, MANIFEST_PATH));
  }
  const end = head.indexOf(MANIFEST_FILES_KEY);
  const manifest =
    end > 0 && head[end - 1] === ','
      ? parseManifest(`${head.slice(0, end)} "files": {}}`, siteDir)
      : await readManifest(siteDir);
  if (!manifest) return null;
  const { files: _, ...rest } = manifest;
  return rest;
}

/** The manifest of a built site, or null when the directory holds none. */
export async function readManifest(siteDir: string): Promise<Manifest | null> {
  let text: string;
  try {
    text = await readFile(join(siteDir, MANIFEST_PATH), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return null;
    throw withPath(error, join(siteDir, MANIFEST_PATH));
  }
  return parseManifest(text, siteDir);
}

/** Sites built before levels recorded `compress: true|false`: their `.gz`/`.br` were made as `fast` makes them. */
function withCompression(manifest: Manifest): Manifest {
  const { compress, ...settings } = manifest.settings as Manifest['settings'] & { compress?: boolean };
  if (manifest.settings.compression !== undefined || compress === undefined) return manifest;
  return { ...manifest, settings: { ...settings, compression: compress ? 'fast' : 'none' } };
}

function parseManifest(text: string, siteDir: string): Manifest {
  try {
    const manifest = JSON.parse(text) as Manifest;
    if (manifest.generator !== 'cities-api' || typeof manifest.files !== 'object')
      throw new Error('not a cities-api manifest');
    return withCompression(manifest);
  } catch (error) {
    throw new CitiesApiError(
      `${join(siteDir, MANIFEST_PATH)} is damaged (${(error as Error).message}); delete ${siteDir} and build again`,
    );
  }
}

// Under glibc's 128 KiB mmap threshold: a larger buffer, freed, would raise it (and so the free
// memory each malloc arena keeps) for the rest of the process.
export const READ_BYTES = 96 * 1024;
/** A line of the manifest's list as manifestText writes it: `  "path": "sha256",`. */
const LISTED = /^ {2}("(?:[^"\\]|\\.)*"): "([0-9a-f]{64})",?$/;

/**
 * The manifest of a built site, or null when the directory holds none; its list of files read a
 * chunk at a time into a FileList (a plain object of 400,000 paths costs tens of MB). A
 * manifest not laid out as the build writes it is parsed whole.
 */
export async function readSiteFiles(siteDir: string): Promise<SiteFiles | null> {
  const head = await readManifestHead(siteDir);
  if (!head) return null;
  const files = new FileList();
  const file = await open(join(siteDir, MANIFEST_PATH));
  let listed = false;
  try {
    const buffer = Buffer.alloc(READ_BYTES);
    // A character split by the end of a read is kept for the next: decoding each read alone would garble it.
    const decoder = new StringDecoder('utf8');
    let rest = '';
    let listing = false;
    for (let position = 0; ; ) {
      const { bytesRead } = await file.read(buffer, 0, READ_BYTES, position);
      position += bytesRead;
      const lines = (rest + (bytesRead ? decoder.write(buffer.subarray(0, bytesRead)) : decoder.end())).split('\n');
      rest = bytesRead ? lines.pop()! : '';
      for (const line of lines) {
        if (!listing) listing = !listed && line === MANIFEST_FILES_KEY.slice(1);
        else if (line === ' }') [listing, listed] = [false, true];
        else {
          const match = LISTED.exec(line);
          if (!match) return wholeSiteFiles(siteDir);
          files.add(JSON.parse(match[1]!) as string, match[2]!, false);
        }
      }
      if (!bytesRead) break;
    }
  } finally {
    await file.close();
  }
  return listed ? { ...head, files } : wholeSiteFiles(siteDir);
}

/** readSiteFiles for a manifest laid out otherwise (written by hand, or by another tool): parsed whole. */
async function wholeSiteFiles(siteDir: string): Promise<SiteFiles | null> {
  const manifest = await readManifest(siteDir);
  if (!manifest) return null;
  const files = new FileList();
  for (const [path, hash] of Object.entries(manifest.files))
    files.add(path, /^[0-9a-f]{64}$/.test(hash) ? hash : '', false);
  return { ...manifest, files };
}
