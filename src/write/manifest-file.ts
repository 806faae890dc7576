import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CitiesApiError } from '../core/errors.js';
import { MANIFEST_FILES_KEY, MANIFEST_PATH, type Manifest, type ManifestHead } from '../site/manifest.js';

// Reading a built site's manifest: whole (the build, comparing files), or its head (a server).

const HEAD_BYTES = 64 * 1024;

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
  const end = head.indexOf(MANIFEST_FILES_KEY);
  const manifest = end > 0 && head[end - 1] === ',' ? parseManifest(`${head.slice(0, end)} "files": {}}`, siteDir) : await readManifest(siteDir);
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
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw error;
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
    if (manifest.generator !== 'cities-api' || typeof manifest.files !== 'object') throw new Error('not a cities-api manifest');
    return withCompression(manifest);
  } catch (error) {
    throw new CitiesApiError(`${join(siteDir, MANIFEST_PATH)} is damaged (${(error as Error).message}); delete ${siteDir} and build again`);
  }
}
