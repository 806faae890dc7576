#!/usr/bin/env node
// Bundles the edge adapters (src/http/platforms/index.ts and all it imports: the pure core, route(),
// the fetch handler) into one web-standard ES module, lib/edge/cities-api-edge.js, which
// `cities-api edge` copies into each project. Run by `npm run build` (and so by prepack and
// `npm test`): users of the package need no bundler.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const result = await build({
  absWorkingDir: root,
  entryPoints: ['src/http/platforms/index.ts'],
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
if (process.argv.includes('--verbose')) console.log(`lib/edge/cities-api-edge.js: ${bytes} bytes`);
