#!/usr/bin/env node
// Bundles the edge adapters (every src/platforms/<platform>/adapter.ts and all they import: the pure
// core, route(), the fetch handler; never a recipe, which is Node's) into one web-standard ES module,
// lib/edge/cities-api-edge.js, which `cities-api edge` copies into each project. Run by `npm run
// build` (and so by prepack and `npm test`): users of the package need no bundler.
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const platforms = readdirSync(new URL('../src/platforms', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
const result = await build({
  absWorkingDir: root,
  stdin: {
    contents: platforms.map((p) => `export * from './${p}/adapter.ts';\n`).join(''),
    resolveDir: 'src/platforms',
    sourcefile: 'edge-bundle.ts',
    loader: 'ts',
  },
  outfile: 'lib/edge/cities-api-edge.js',
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});
const bytes = Object.values(result.metafile.outputs)[0].bytes;
if (process.argv.includes('--verbose'))
  console.log(`lib/edge/cities-api-edge.js: ${bytes} bytes (${platforms.join(', ')})`);
