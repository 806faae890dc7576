import { join } from 'node:path';
import type { PlatformLimit } from '../limits.js';
import { entryModule, shellWord, textFile, type EdgeRecipe } from '../recipe.js';

// `cities-api edge deno`: main.js (the user's) for `deno serve`, which reads the site's edge files
// from the site's directory. Deno Deploy must upload both (see docs/deno.md).

const LIMITS_PAGE = 'Deno Deploy docs, "Pricing and limits" page';

/** Deno Deploy's limits at run time; none bounds a figure of the deployment `edge` knows of, so none is checked before writing. */
export const DENO_LIMITS: readonly PlatformLimit[] = [
  {
    what: 'memory of an isolate',
    figure: 512 * 1024 * 1024,
    unit: 'bytes',
    source: LIMITS_PAGE,
    advice: 'the server keeps only the edge files it read (rank files, up to 16 MB of blocks)',
  },
  {
    what: 'CPU time per request (free plan)',
    figure: 50,
    unit: 'ms',
    source: LIMITS_PAGE,
    advice:
      'a computed page of 10,000 cities takes 12-32 ms of CPU, one of every city at 140k cities 350-530 ms: on the free plan, cap computed pages with maxPageCities in main.js (a clear 500 above it)',
  },
];

/**
 * V8's flags in the command that serves the project: V8's young generation capped at 2 MB a
 * semi-space. A streamed computed answer's parts are detached once Deno's server has them
 * (http/handed-parts.ts: their bytes freed as sent); what is left above the server's baseline is
 * the young generation's dead objects, which V8 grows to 32 MB a semi-space on a 24 GB machine
 * (a 4 GB heap limit). At 140k cities, 200 answers of every city in a row (computed) stood +34.6 MB
 * above the first answer's (heap + external) with V8's defaults (+91.5 MB before the parts were
 * detached), +19.2 MB with this flag, at the same CPU per answer (docs/deno.md). A Deno Deploy
 * deployment (an entry point, not this command) runs with V8's defaults. A page sent from its file
 * (http/page-file.ts) makes no parts: +1.8-2.5 MB over 200 answers of every city, flag or not.
 */
export const DENO_V8_FLAGS = '--max-semi-space-size=2';

/** main.js's note on the option Deno Deploy's free plan needs (docs/deno.md, its limits). */
const FREE_PLAN_HINT =
  "// On Deno Deploy's free plan (50 ms of CPU a request), cap the pages it computes: denoServer(site, Deno, files, { maxPageCities: 10000 })\n";

export const denoRecipe: EdgeRecipe = {
  platform: 'deno',
  title: 'Deno Deploy',
  limits: DENO_LIMITS,
  doc: 'docs/deno.md',
  async project({ out, code }) {
    const { siteDir, files } = code(out);
    const main = `const files = new URL(siteDir, import.meta.url);\n${FREE_PLAN_HINT}export default denoServer(site, Deno, files);\n`;
    return {
      ours: files,
      theirs: [textFile(join(out, 'main.js'), entryModule('denoServer', main, ', { siteDir }'))],
      deploy: `deno serve --v8-flags=${DENO_V8_FLAGS} --allow-read=${shellWord(siteDir)} main.js`,
    };
  },
};
