import { join } from 'node:path';
import { CitiesApiError } from '../../core/errors.js';
import { entryModule, posixRelative, textFile, type EdgeRecipe } from '../recipe.js';
import { checkNetlifyToml, netlifyToml } from './netlify-toml.js';

// `cities-api edge netlify`: a Netlify Edge Function in front of the published site. Ours: the
// bundle and the site's settings in the function's folder. The user's: the function's entry and
// netlify.toml (checked when it exists: it must publish the site). Deployed with the Netlify CLI.

/** Netlify's edge function, a folder of netlify/edge-functions (its default directory). */
export const NETLIFY_EDGE_DIR = 'netlify/edge-functions/cities-api';

export const netlifyRecipe: EdgeRecipe = {
  platform: 'netlify',
  async project({ site, out, code }) {
    const publish = posixRelative(out, site);
    if (publish.startsWith('..'))
      throw new CitiesApiError(
        `Netlify publishes a directory inside its project, and ${site} is not inside ${out}: pass --project a directory holding the site (e.g. --project .)`,
        2,
      );
    const dir = join(out, NETLIFY_EDGE_DIR);
    const main = 'export default netlifyEdgeFunction(site);\nexport const config = netlifyEdgeConfig(site);\n';
    const toml = join(out, 'netlify.toml');
    await checkNetlifyToml(toml, out, site);
    return {
      ours: code(dir).files,
      theirs: [
        textFile(join(dir, 'cities-api.mjs'), entryModule('netlifyEdgeConfig, netlifyEdgeFunction', main)),
        textFile(toml, netlifyToml(publish)),
      ],
      deploy: 'npx netlify deploy --prod',
    };
  },
};
