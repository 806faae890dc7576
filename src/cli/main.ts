import { relative } from 'node:path';
import { Writable } from 'node:stream';
import { Command, CommanderError } from 'commander';
import { type Kind, string } from '../app/argument-kinds.js';
import { checkedOptions } from '../app/library-options.js';
import { CitiesApiError } from '../core/errors.js';
import { ROUTES } from '../core/route-table.js';
import { fileSystemError, isErrno } from '../fs/fs-error.js';
import { VERSION } from '../site/version.js';
import { inGitHubActions, problemAnnotation, warningLine } from './annotations.js';
import { registerBuildCommand } from './build-command.js';
import type { CommandContext, Output } from './command.js';
import { registerConfigCommand } from './config-command.js';
import { CONFIG_FILE } from './config-file.js';
import { flagsSaid, inFlags } from './options.js';
import { registerEdgeCommand } from './edge-command.js';
import { watchOutputs } from './output-watch.js';
import { registerServeCommand } from './serve-command.js';
import { registerValidateCommand } from './validate-command.js';

export interface RunOptions {
  readonly rawArgs: readonly string[];
  readonly cwd?: string;
  readonly stdout?: Output;
  readonly stderr?: Output;
}

const output: Kind = (v) => (v instanceof Writable ? undefined : 'a Writable stream, as process.stdout is');
const RUN_OPTIONS: Record<keyof RunOptions, Kind> = {
  rawArgs: (v) =>
    Array.isArray(v) && v.every((arg) => typeof arg === 'string')
      ? undefined
      : "an array of strings, e.g. ['build', '--data', 'cities.csv']",
  cwd: string,
  stdout: output,
  stderr: output,
};

/** The commands, in --help's order: each module adds its own. */
const COMMANDS = [
  registerBuildCommand,
  registerValidateCommand,
  registerServeCommand,
  registerConfigCommand,
  registerEdgeCommand,
];

/** GitHub shows at most 10 error annotations per step (actions/toolkit docs/problem-matchers.md, "Limitations"): the rest are in the message. */
const MAX_ANNOTATIONS = 10;

/** Runs the command line and resolves to its exit code: 0 ok, 1 bad input, 2 bad usage. */
export async function runMain(asked: RunOptions): Promise<number> {
  // Called from JavaScript too: its options checked as build()'s are (library-options.ts).
  const options = checkedOptions('runMain', asked, RUN_OPTIONS, 'RunOptions') as unknown as RunOptions;
  if (!options.rawArgs)
    throw new CitiesApiError('runMain() needs `rawArgs`: the arguments, e.g. process.argv.slice(2)', 2);
  const cwd = options.cwd ?? process.cwd();
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  let interrupted = false;
  // A write to stdout or stderr that fails later (a file, a pipe) ends neither the run nor the process.
  const outputs = watchOutputs(stdout, stderr);
  const program = new Command('cities-api')
    .description(`Build the paginated ${ROUTES.endpoint} API as static JSON files, and serve them.`)
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => void stdout.write(s), writeErr: (s) => void stderr.write(s) })
    .showHelpAfterError('(run with --help for usage)')
    .option('--config <file>', `config file (default: ${CONFIG_FILE} in the working directory, if there)`);
  const context: CommandContext = {
    cwd,
    stdout,
    stderr,
    // What the library gives the CLI's log and warnings names options marked (core/errors.ts): said as its flags.
    say: (line) => void stdout.write(`${flagsSaid(line)}\n`),
    shown: (path) => (relative(cwd, path).startsWith('..') ? path : relative(cwd, path)),
    configFile: () => program.opts<{ config?: string }>().config,
    onInterrupt: () => (interrupted = true),
    warn: (warning) => void stderr.write(`${warningLine({ ...warning, reason: flagsSaid(warning.reason) })}\n`),
    runsOn: outputs.runsOn,
  };
  for (const register of COMMANDS) register(program, context);
  return outputs.settle(await run(program, options.rawArgs, stderr, () => interrupted));
}

/** The command line parsed and its command run: the exit code, its error said on stderr. */
async function run(
  program: Command,
  rawArgs: readonly string[],
  stderr: Output,
  interrupted: () => boolean,
): Promise<number> {
  try {
    await program.parseAsync([...rawArgs], { from: 'user' });
    return 0;
  } catch (thrown) {
    if (thrown instanceof CommanderError) return thrown.exitCode === 0 ? 0 : 2;
    // An errno no step named more precisely: still one line, with its path, or its system call when it names none.
    const error = isErrno(thrown) ? await fileSystemError(thrown, { what: 'path' }) : thrown;
    if (error instanceof CitiesApiError) {
      stderr.write(`cities-api: ${inFlags(error)}\n`);
      if (inGitHubActions())
        for (const problem of error.problems.slice(0, MAX_ANNOTATIONS))
          stderr.write(`${problemAnnotation('error', problem, 'cities-api: invalid dataset')}\n`);
      return interrupted() ? 130 : error.exitCode;
    }
    stderr.write(`cities-api: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}
