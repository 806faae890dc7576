import type { Command } from 'commander';
import { datasetOf, tableCommand, type CommandContext } from './command.js';

/** `cities-api validate`: a dataset checked, every problem listed, nothing written. */
export function registerValidateCommand(program: Command, context: CommandContext): void {
  const command = tableCommand(program, 'validate', 'check a dataset and list every problem, writing nothing', context);
  command.cmd.action(async () => {
    const { o } = await command.options();
    const data = datasetOf(command, o.data!, context);
    const { readDataset } = await import('../dataset/read-dataset.js');
    const { count } = await readDataset(data.path, { shownAs: data.name, strict: o.strict, onWarning: context.warn });
    context.say(`${data.name}: ${count} ${count === 1 ? 'city' : 'cities'}, valid`);
  });
}
