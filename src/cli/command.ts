import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { loadConfig, type ProjectConfig } from './config-file.js';
import { commanderOption, optionsOf, resolveOptions, type CommandName, type OptionValues } from './options.js';

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
  for (const option of optionsOf(name)) cmd.addOption(commanderOption(option, name));
  return {
    cmd,
    options: async () => {
      const config = await loadConfig(context.cwd, context.configFile());
      const cli = { source: (a: string) => cmd.getOptionValueSource(a), value: (a: string) => cmd.getOptionValue(a) };
      return { config, o: resolveOptions(name, cli, config) };
    },
  };
}
