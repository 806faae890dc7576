import type { Command } from 'commander';
import { datasetOf, tableCommand, type CommandContext } from './command.js';

/** `cities-api validate`: a dataset checked, every problem listed, nothing written. */
export function registerValidateCommand(program: Command, context: CommandContext): void {
  const command = tableCommand(program, 'validate', 'check a dataset and list every problem, writing nothing', context);
  command.cmd.action(async () => {
    const { o } = await command.options();
    const data = datasetOf(command, o.data!, context);
    const { readDataset } = await import('../dataset/read-dataset.js');
    const { unfolded } = await import('../dataset/log-fold.js');
    const { LoggedIdTaken } = await import('../dataset/logged-in-file.js');
    const table = await readDataset(data.path, {
      shownAs: data.name,
      strict: o.strict,
      onWarning: context.warn,
    });
    const { count } = table;
    context.say(`${data.name}: ${count} ${count === 1 ? 'city' : 'cities'}, valid`);
    // Read, never folded in: validate writes nothing (build and serve --data fold them in first).
    const { cities, log, taken } = await unfolded(data.path, table);
    // A logged city whose id is another row's: build and serve refuse to fold it in (the log kept), as this says.
    if (taken.length) throw new LoggedIdTaken(data.name, context.shown(log), taken);
    if (!cities.length) return;
    const [first, last] = [cities[0]!.id, cities.at(-1)!.id];
    const some = cities.length === 1 ? `1 city (id ${first})` : `${cities.length} cities (ids ${first} to ${last})`;
    context.say(
      `${data.name}: and ${some} created by a writable server, logged in ${context.shown(log)}, not folded into the file yet: build and serve --data fold them in first`,
    );
  });
}
