#!/usr/bin/env node
// How lib/ is made, the one place that says it: `npm run build` (and so `npm start`, the benches and
// the test tiers' build on demand, test/build-on-demand.ts) and `npm pack`'s prepack run this.
// lib/ is removed first (no module of an older build survives), compiled by tsc, then the edge
// bundle is added (scripts/bundle-edge.mjs).
//   node scripts/build-lib.mjs         for development: ends by writing the stamp lib/.built, dated
//                                      when the build began (what changed during it counts as newer)
//   node scripts/build-lib.mjs --pack  for the package: .js without comments, .d.ts with them (a
//                                      second pass, unchecked: the first checked), and no stamp
import { execFileSync } from 'node:child_process';
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
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
const tsc = require.resolve('typescript/bin/tsc');
const compile = (...args) =>
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', ...args], { cwd: root, stdio: 'inherit' });

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
  else compile();
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
