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
 * V8's flags in the command that serves the project. The dead parts of a streamed computed answer (64 KiB
 * arrays Deno's server has sent: no Deno API says when, so they cannot be written again) are
 * collected with the young generation: when it fills with the answers' objects on V8's heap, or
 * when the young arrays' bytes reach twice V8's default largest semi-space. V8 grows the young
 * generation as what survives its collections adds up (to 32 MB a semi-space on a 24 GB machine):
 * at 140k cities, 200 answers of every city in a row
 * stood +88-91 MB above the server's baseline (heap + external), 1,400 of 10,000 cities +88-90 MB;
 * capped at 2 MB, +10-23 MB, at the same CPU per answer (docs/deno.md). Nothing in the answer's
 * code was found to bound it otherwise. A Deno Deploy deployment (an entry point, not this
 * command) runs with V8's defaults. A page sent from its file (http/page-file.ts) makes no parts:
 * +1.8-2.5 MB over 200 answers of every city, flag or not.
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
