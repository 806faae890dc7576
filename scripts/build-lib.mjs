#!/usr/bin/env node
// How lib/ is made, the one place that says it: `npm run build` (and so `npm start`, the benches and
// the test tiers' build on demand, test/build-on-demand.ts) and `npm pack`'s prepack run this.
// lib/ is removed first (no module of an older build survives), compiled, then the edge bundle is
// added (scripts/bundle-edge.mjs).
//   node scripts/build-lib.mjs         for development: each module transpiled by esbuild, types
//                                      not checked (npm run typecheck and CI check them; vitest runs
//                                      the unit tier the same way), no .d.ts: 13 -> 0.4 CPU-s. Ends
//                                      by writing the stamp lib/.built, dated when the build began
//                                      (what changed during it counts as newer)
//   node scripts/build-lib.mjs --pack  for the package, by tsc: checked, .js without comments, .d.ts
//                                      with them (a second pass, unchecked: the first checked), and
//                                      no stamp
import { readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const LIB = 'lib';
/** What a build reads (files and directories): lib/ is current when none is newer than its stamp. */
export const INPUTS = ['src', 'scripts/build-lib.mjs', 'scripts/bundle-edge.mjs', 'tsconfig.json'];
/** The stamp test/build-on-demand.ts reads. Never packed: --pack writes none. */
export const STAMP = 'lib/.built';

const require = createRequire(import.meta.url);

/** Every module of src/ as its own .js in lib/ (esbuild reads tsconfig.json); throws on a syntax error, after esbuild printed it. */
async function transpile() {
  const { build } = await import('esbuild');
  const entryPoints = readdirSync(join(root, 'src'), { recursive: true })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join('src', f))
    .sort();
  await build({
    absWorkingDir: root,
    entryPoints,
    outdir: LIB,
    outbase: 'src',
    format: 'esm',
    platform: 'node',
    target: 'es2022',
    logLevel: 'error',
  }).catch((error) => {
    throw Object.assign(error, { status: 2 });
  });
}

/**
 * The package's two passes in one process, as `tsc -p tsconfig.json --removeComments --declaration
 * false` (checked) then `--emitDeclarationOnly --noCheck` would write them (byte for byte: compared
 * on this repository), the second reading the files the first parsed (a TypeScript program cannot
 * take another's when emit options differ; its compiler host can): 26.7 -> 24.3 CPU-s for lib/, one
 * Node and TypeScript start and one parse of src/, @types/node and the default lib fewer. Throws
 * with tsc's exit status when the sources do not compile, after printing the diagnostics as tsc does.
 */
function compileForPack() {
  const ts = require('typescript');
  const fail = (diagnostics) => {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => ts.sys.newLine };
    const format = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
    process.stdout.write(format(diagnostics, host));
    throw Object.assign(new Error('tsc failed'), { status: ts.ExitStatus.DiagnosticsPresent_OutputsSkipped });
  };
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => fail([d]),
    },
  );
  if (config.errors.length) fail(config.errors);
  const host = ts.createCompilerHost(config.options);
  const parsed = new Map();
  const getSourceFile = host.getSourceFile;
  host.getSourceFile = (fileName, version, ...rest) => {
    const key = `${fileName}\0${JSON.stringify(version)}`;
    if (!parsed.has(key)) parsed.set(key, getSourceFile.call(host, fileName, version, ...rest));
    return parsed.get(key);
  };
  const program = (options) => ts.createProgram({ rootNames: config.fileNames, options, host });
  const code = program({ ...config.options, removeComments: true, declaration: false });
  const problems = ts.getPreEmitDiagnostics(code);
  if (problems.length) fail(problems);
  for (const pass of [code, program({ ...config.options, emitDeclarationOnly: true, noCheck: true })]) {
    const emitted = pass.emit();
    if (emitted.emitSkipped || emitted.diagnostics.length) fail(emitted.diagnostics);
  }
}

/** Builds lib/; `pack`: as the package ships it. Throws (tsc's exit) when the sources do not compile. */
async function buildLib(pack) {
  const began = new Date();
  rmSync(new URL(`../${LIB}`, import.meta.url), { recursive: true, force: true });
  if (pack) compileForPack();
  else await transpile();
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
