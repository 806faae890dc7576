import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import type { Problem } from '../core/errors.js';
import { loadConfig, type ProjectConfig } from './config-file.js';
import {
  aliasHelp,
  aliasOptions,
  attributeOf,
  commanderOption,
  isArgument,
  isEnvironment,
  optionsOf,
  spellingName,
} from './options.js';
import type { CommandName, OptionValues } from './option-spec.js';
import { type CommandLine, resolveOptions } from './option-values.js';

// What each command module (build-command.ts, serve-command.ts...) gets: the run's context, and
// its command added with its options from the one option table.

export type Output = Writable & { isTTY?: boolean };

/** What every command runs with: the working directory, the output streams, and how it speaks. */
export interface CommandContext {
  readonly cwd: string;
  readonly stdout: Output;
  readonly stderr: Output;
  /** A line on stdout. */
  readonly say: (line: string) => void;
  /** A path as the user gave it (relative to the working directory when inside it), for messages. */
  readonly shown: (path: string) => string;
  /** The program's --config, if given. */
  readonly configFile: () => string | undefined;
  /** Told once Ctrl-C stopped a build: the exit code is then 130, as a shell's. */
  readonly onInterrupt: () => void;
  /** A warning line on stderr (an annotation under GitHub Actions): what is not wrong enough to refuse. */
  readonly warn: (warning: Problem) => void;
  /** Said by a command that runs until stopped: what it goes on without if stdout fails (said at once, output-watch.ts). */
  readonly runsOn: (without: string) => void;
}

export interface TableCommand {
  readonly cmd: Command;
  /** Its option values resolved (flag, else config file, else default), and the config file read. */
  options(): Promise<{ readonly config: ProjectConfig; readonly o: Partial<OptionValues> }>;
}

/** Adds the command `name` (its last word, under `parent`) with its options from the table. */
export function tableCommand(
  parent: Command,
  name: CommandName,
  description: string,
  context: CommandContext,
): TableCommand {
  const cmd = parent.command(name.split(' ').at(-1)!).description(description);
  const environment = optionsOf(name).filter((option) => isEnvironment(option.flag));
  if (environment.length)
    cmd.addHelpText(
      'after',
      `\nEnvironment:\n${environment.map((option) => `  ${spellingName(option.flag)}  ${option.help}`).join('\n')}`,
    );
  for (const option of optionsOf(name)) {
    if (isEnvironment(option.flag)) continue;
    cmd.addOption(commanderOption(option, name));
    for (const alias of aliasOptions(option)) cmd.addOption(alias);
    for (const argument of (option.aliases ?? []).filter(isArgument)) cmd.argument(argument, aliasHelp(option));
  }
  return {
    cmd,
    options: async () => {
      const config = await loadConfig(context.cwd, context.configFile());
      return { config, o: resolveOptions(name, commandLine(cmd), config) };
    },
  };
}

/** What commander parsed, by spelling: a flag's value when given on the command line, a positional argument's when given; an environment variable's when set. */
function commandLine(cmd: Command): CommandLine {
  return {
    given: (spelling) => {
      if (isEnvironment(spelling)) return process.env[spellingName(spelling)];
      if (isArgument(spelling)) {
        const index = cmd.registeredArguments.findIndex((a) => `[${a.name()}]` === spelling);
        return index < 0 ? undefined : cmd.processedArgs[index];
      }
      const attribute = attributeOf(spelling);
      return cmd.getOptionValueSource(attribute) === 'cli' ? cmd.getOptionValue(attribute) : undefined;
    },
  };
}

/** The dataset's path, and how messages name it: as typed on the command line, else relative to the working directory when inside it. */
export function datasetOf(
  command: TableCommand,
  data: string,
  context: CommandContext,
): { path: string; name: string } {
  const path = resolve(context.cwd, data);
  return { path, name: command.cmd.getOptionValueSource('data') === 'cli' ? data : context.shown(path) };
}
