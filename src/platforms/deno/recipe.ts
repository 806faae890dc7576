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
    advice: 'a computed page reads only the blocks it needs; no ICU at run time',
  },
];

export const denoRecipe: EdgeRecipe = {
  platform: 'deno',
  title: 'Deno Deploy',
  limits: DENO_LIMITS,
  doc: 'docs/deno.md',
  async project({ out, code }) {
    const { siteDir, files } = code(out);
    const main = `const files = new URL(siteDir, import.meta.url);\nexport default denoServer(site, Deno, files);\n`;
    return {
      ours: files,
      theirs: [textFile(join(out, 'main.js'), entryModule('denoServer', main, ', { siteDir }'))],
      deploy: `deno serve --allow-read=${shellWord(siteDir)} main.js`,
    };
  },
};
