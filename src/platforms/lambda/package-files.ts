import { lstat, readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { CitiesApiError, wordingOf } from '../../core/errors.js';
import { ROUTES } from '../../core/route-table.js';
import { LAYOUTS, rankPath, type EdgeIndex } from '../../site/edge-files.js';
import { decodeBlock, decodeRanks, tagBytes } from '../../site/edge-format.js';
import { blocksOf, parseIndex } from '../../site/edge-index.js';

// The site's files a Lambda package holds: the edge index, every rank file, the default
// ordering's layout only (the cities once; a page of any other ordering is gathered from it by
// position, site/edge-gather.ts) and openapi.json. At 140k cities the 6 layouts a build writes
// are 428 MB, over Lambda's 250 MiB unzipped; one is 71 MB. Each file is checked before it is
// zipped: a regular file of the site (no symbolic link on its way, which would zip what it
// points to), of the build the index names (its tag), and whole (the size its header says), so
// that a site caught between two builds, or a truncated file, is refused rather than deployed.

export interface PackageFile {
  /** Its path in the site, and in the package. */
  readonly name: string;
  readonly size: number;
}

/** The site's files the package holds, with their sizes (read from the index alone). */
export async function packageFiles(site: string): Promise<{ index: EdgeIndex; files: PackageFile[] }> {
  const root = await realpath(site);
  const index = parseIndex(await siteFile(root, ROUTES.edge.index));
  const { starts, path } = blocksOf(index, ROUTES.absent);
  const names = [ROUTES.edge.index, ...LAYOUTS.map(rankPath), ...starts.map((_, b) => path(b)), ROUTES.extras.openapi];
  const files = await Promise.all(names.map(async (name) => ({ name, size: (await siteStat(root, name)).size })));
  return { index, files };
}

/**
 * The bytes of the package's files, each checked: of the size measured, and (edge files) of the
 * index's build and whole. A failure names the file and says to rebuild the site.
 */
export async function packageBytes(
  site: string,
  index: EdgeIndex,
  files: readonly PackageFile[],
): Promise<Uint8Array[]> {
  const root = await realpath(site);
  const tag = tagBytes(index.tag);
  const { starts, path } = blocksOf(index, ROUTES.absent);
  const blocks = new Map(starts.map((start, b) => [path(b), (starts[b + 1] ?? index.count) - start]));
  const ranks = new Set(LAYOUTS.map(rankPath));
  return Promise.all(
    files.map(async ({ name, size }) => {
      const bytes = await siteFile(root, name);
      try {
        if (bytes.length !== size) throw new CitiesApiError(`${name} changed while it was packaged`);
        if (ranks.has(name) && decodeRanks(bytes, tag, name).order.length !== index.count)
          throw new CitiesApiError(`${name} does not hold the ${index.count} cities of the edge index`);
        const cities = blocks.get(name);
        if (cities !== undefined && decodeBlock(bytes, tag, name).count !== cities)
          throw new CitiesApiError(`${name} does not hold the ${cities} cities the edge index says`);
      } catch (error) {
        if (!(error instanceof CitiesApiError)) throw error;
        throw rebuild(
          `the site's edge data cannot be packaged: ${wordingOf(error).replace(/[:;] (deploy|rebuild) .*$/, '')}`,
        );
      }
      return bytes;
    }),
  );
}

const rebuild = (why: string) =>
  new CitiesApiError(`${why}: rebuild the site (cities-api build), then run edge lambda again`, 1);

/** A file of the site by its site path: a regular file, reached through no symbolic link (lstat, realpath). */
async function siteStat(root: string, name: string) {
  const path = join(root, name);
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
    // The site's edge data is written by every build of this version.
    throw rebuild(`${path} is missing`);
  });
  if (stats.isSymbolicLink())
    throw rebuild(`${path} is a symbolic link: edge lambda packages only the site's own files`);
  if (!stats.isFile()) throw rebuild(`${path} is not a file`);
  if ((await realpath(path)) !== path)
    throw rebuild(`${path} is reached through a symbolic link: edge lambda packages only the site's own files`);
  return stats;
}

/** A file of the site, checked as siteStat does, read. */
async function siteFile(root: string, name: string): Promise<Uint8Array> {
  await siteStat(root, name);
  return readFile(join(root, name));
}
