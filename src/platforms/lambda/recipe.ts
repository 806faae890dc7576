import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CitiesApiError } from '../../core/errors.js';
import { ROUTES } from '../../core/route-table.js';
import { BUNDLE_NAME, DATA_NAME, entryModule, posixRelative, textFile, type EdgeRecipe } from '../recipe.js';
import { zipArchive } from './zip-file.js';

// `cities-api edge lambda`: function.zip (ours) holds the entry (the user's index.mjs, as it stands),
// the bundle, the site's settings, and the site's edge files at their site paths beside them.

const ENTRY = 'index.mjs';

export const lambdaRecipe: EdgeRecipe = {
  platform: 'lambda',
  async project({ site, out, bundle, code }) {
    const { files } = code(out);
    const main = entryModule(
      'lambdaHandler',
      'export const handler = lambdaHandler(site, (path) => readFile(new URL(path, import.meta.url)));\n',
      '',
      "import { readFile } from 'node:fs/promises';\n",
    );
    const entry = textFile(join(out, ENTRY), main);
    const zip = zipArchive([
      { name: ENTRY, bytes: await readFile(entry.path).catch(() => entry.bytes) },
      { name: BUNDLE_NAME, bytes: bundle },
      { name: DATA_NAME, bytes: files.find((f) => f.path.endsWith(DATA_NAME))!.bytes },
      ...(await edgeDataFiles(site)),
      // Answered at /openapi.json, as the static hosts answer it.
      { name: ROUTES.extras.openapi, bytes: await readFile(join(site, ROUTES.extras.openapi)) },
    ]);
    return {
      ours: [...files, { path: join(out, 'function.zip'), bytes: zip }],
      theirs: [entry],
      deploy: 'aws lambda update-function-code --function-name cities-api --zip-file fileb://function.zip',
    };
  },
};

/** The site's edge files (all of `_cities-api/edge/`, sorted), as zip entries at their site paths. */
async function edgeDataFiles(site: string): Promise<{ name: string; bytes: Uint8Array }[]> {
  const dir = join(site, ROUTES.edge.dir);
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => {
    throw new CitiesApiError(
      `${dir} is missing: rebuild the site with this version of cities-api (it writes the edge data)`,
      1,
    );
  });
  const names = entries
    .filter((e) => e.isFile())
    .map((e) => posixRelative(site, join(e.parentPath, e.name)).replace(/^\.\//, ''))
    .sort();
  return Promise.all(names.map(async (name) => ({ name, bytes: await readFile(join(site, name)) })));
}
