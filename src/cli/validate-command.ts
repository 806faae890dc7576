import { resolve } from 'node:path';
import type { Command } from 'commander';
import { readDataset } from '../dataset/read-dataset.js';
import { tableCommand, type CommandContext } from './command.js';

/** `cities-api validate`: a dataset checked, every problem listed, nothing written. */
export function registerValidateCommand(program: Command, context: CommandContext): void {
  const command = tableCommand(program, 'validate', 'check a dataset and list every problem, writing nothing', context);
  command.cmd.action(async () => {
    const { o } = await command.options();
    const data = resolve(context.cwd, o.data!);
    const { count } = await readDataset(data);
    context.say(`${context.shown(data)}: ${count} cities, valid`);
  });
}
