#!/usr/bin/env node
// How lib/ is made, the one place that says it: `npm run build` (and so `npm start`, the benches and
// the test tiers' build on demand, test/build-on-demand.ts) and `npm pack`'s prepack run this.
// lib/ is removed first (no module of an older build survives), compiled by tsc, then the edge
// bundle is added (scripts/bundle-edge.mjs).
//   node scripts/build-lib.mjs         for development: ends by writing the stamp lib/.built, dated
//                                      when the build began (what changed during it counts as newer)
//   node scripts/build-lib.mjs --pack  for the package: .js without comments, .d.ts with them (tsc's
//                                      second pass, unchecked: the first checked), and no stamp
import { execFileSync } from 'node:child_process';
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const LIB = 'lib';
/** What a build reads (files and directories): lib/ is current when none is newer than its stamp. */
export const INPUTS = ['src', 'scripts/build-lib.mjs', 'scripts/bundle-edge.mjs', 'tsconfig.json'];
/** The stamp test/build-on-demand.ts reads. Never packed: --pack writes none. */
export const STAMP = 'lib/.built';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compile = (...args) =>
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', ...args], { cwd: root, stdio: 'inherit' });

/** Builds lib/; `pack`: as the package ships it. Throws (tsc's exit) when the sources do not compile. */
async function buildLib(pack) {
  const began = new Date();
  rmSync(new URL(`../${LIB}`, import.meta.url), { recursive: true, force: true });
  if (pack) {
    compile('--removeComments', '--declaration', 'false');
    compile('--emitDeclarationOnly', '--noCheck');
  } else compile();
  await import('./bundle-edge.mjs');
  if (pack) return;
  const stamp = new URL(`../${STAMP}`, import.meta.url);
  writeFileSync(stamp, '');
  utimesSync(stamp, began, began);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    await buildLib(process.argv.includes('--pack'));
  } catch (error) {
    // tsc printed its diagnostics already.
    if (error.status === undefined) console.error(error);
    process.exitCode = error.status ?? 1;
  }
}
