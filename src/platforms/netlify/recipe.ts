import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CitiesApiError } from '../../core/errors.js';
import type { PlatformLimit } from '../limits.js';
import { entryModule, posixRelative, textFile, type EdgeRecipe } from '../recipe.js';
import { checkNetlifyToml, netlifyToml } from './netlify-toml.js';

// `cities-api edge netlify`: a Netlify Edge Function in front of the published site. Ours: the
// bundle and the site's settings in the function's folder. The user's: the function's entry and
// netlify.toml (checked when it exists: it must publish the site). Deployed with the Netlify CLI.

/** Netlify's edge function, a folder of netlify/edge-functions (its default directory). */
export const NETLIFY_EDGE_DIR = 'netlify/edge-functions/cities-api';
const LIMITS_PAGE = 'Netlify docs, "Edge Functions limits" page';

export const NETLIFY_LIMITS: readonly PlatformLimit[] = [
  {
    what: "edge functions' code, compressed",
    figure: 20_000_000,
    unit: 'bytes',
    measure: 'codeBytes',
    source: LIMITS_PAGE,
    advice:
      'the bundle is the same at any size of site (the function reads the edge data from the CDN): keep other edge functions of the project small',
  },
  {
    what: 'memory of the deployed edge functions together',
    figure: 512 * 1024 * 1024,
    unit: 'bytes',
    source: LIMITS_PAGE,
    advice: 'the function keeps only the edge files it read, for at most 4 origins (a site and its deploy previews)',
  },
  {
    what: 'CPU time per request',
    figure: 50,
    unit: 'ms',
    source: LIMITS_PAGE,
    advice:
      "a covered query is the CDN's file (context.next()); a computed page reads only the blocks it needs, and holds at most 10,000 cities (12-32 ms of CPU under deno serve)",
  },
];

export const netlifyRecipe: EdgeRecipe = {
  platform: 'netlify',
  title: 'Netlify Edge Functions',
  limits: NETLIFY_LIMITS,
  doc: 'docs/netlify-functions.md',
  async project({ site, out, code, check }) {
    const publish = posixRelative(out, site);
    if (publish.startsWith('..'))
      throw new CitiesApiError(
        `Netlify publishes a directory inside its project, and ${site} is not inside ${out}: pass --project a directory holding the site (e.g. --project .)`,
        2,
      );
    const dir = join(out, NETLIFY_EDGE_DIR);
    const main = 'export default netlifyEdgeFunction(site);\nexport const config = netlifyEdgeConfig(site);\n';
    const entry = textFile(join(dir, 'cities-api.mjs'), entryModule('netlifyEdgeConfig, netlifyEdgeFunction', main));
    const { files } = code(dir);
    check({ codeBytes: { value: gzipSync(Buffer.concat([...files, entry].map((f) => f.bytes))).length } });
    const toml = join(out, 'netlify.toml');
    await checkNetlifyToml(toml, out, site);
    return {
      ours: files,
      theirs: [entry, textFile(toml, netlifyToml(publish))],
      deploy: 'npx netlify deploy --prod',
    };
  },
};
