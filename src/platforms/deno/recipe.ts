import { join } from 'node:path';
import { entryModule, shellWord, textFile, type EdgeRecipe } from '../recipe.js';

// `cities-api edge deno`: main.js (the user's) for `deno serve`, which reads the site's edge files
// from the site's directory. Deno Deploy must upload both (see docs/deno.md).

export const denoRecipe: EdgeRecipe = {
  platform: 'deno',
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
