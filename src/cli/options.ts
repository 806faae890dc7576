import { Option } from 'commander';
import { type CitiesApiError, optionsSaid } from '../core/errors.js';
import { BUILD_OPTIONS } from './build-options.js';
import { DATASET_OPTIONS } from './dataset-options.js';
import { DEPLOY_OPTIONS } from './deploy-options.js';
import type { CommandName, OptionSpec } from './option-spec.js';
import { SERVE_OPTIONS } from './serve-options.js';

// The option table: every flag of every command, and every key of cities-api.config.json, with its
// default, its parser and its help, its rows kept by group in dataset-, build-, serve- and
// deploy-options.ts. Commander's options and --help, the config file's checks and the README's table
// are all made from this one table, so a key cannot be accepted and then ignored.

export const OPTIONS: readonly OptionSpec[] = [
  ...DATASET_OPTIONS,
  ...BUILD_OPTIONS,
  ...SERVE_OPTIONS,
  ...DEPLOY_OPTIONS,
];

/** The options of one command, in table order. */
export function optionsOf(command: CommandName): OptionSpec[] {
  return OPTIONS.filter((o) => o.commands.includes(command));
}

/** The default as --help and the README say it, or undefined. */
export function defaultText(option: OptionSpec, command?: CommandName): string | undefined {
  const applies = !option.defaultIn || (command ? option.defaultIn.includes(command) : true);
  if (option.defaultText) return option.defaultText;
  if (option.default === undefined || !applies || typeof option.default === 'boolean') return undefined;
  return Array.isArray(option.default) ? option.default.join(',') : String(option.default);
}

/** Commander's Option for a table entry, its help ending with the default. */
export function commanderOption(option: OptionSpec, command: CommandName): Option {
  const shown = defaultText(option, command);
  const built = new Option(
    option.flag,
    `${option.helpIn?.[command] ?? option.help}${shown ? ` (default: ${shown})` : ''}`,
  );
  return option.choices ? built.choices(option.choices) : built;
}

/** The attribute commander stores a flag's value under (`--no-compress` → `compress`). */
export function attributeOf(flag: string): string {
  return new Option(flag).attributeName();
}

/** Whether a spelling is a positional argument (`[dir]`) rather than a flag. */
export function isArgument(spelling: string): boolean {
  return spelling.startsWith('[');
}

/** Whether a spelling is an environment variable (`$CITIES_API_TOKEN`) rather than a flag. */
export function isEnvironment(spelling: string): boolean {
  return spelling.startsWith('$');
}

/** A spelling as messages name it: `--out`, `[dir]`, `CITIES_API_TOKEN`. */
export function spellingName(spelling: string): string {
  if (isEnvironment(spelling)) return spelling.slice(1);
  return isArgument(spelling) ? spelling : spelling.split(' ')[0]!;
}

/** What --help says of an alias. */
export function aliasHelp(option: OptionSpec): string {
  return `alias of ${spellingName(option.flag)}`;
}

/** Commander's Options for a table entry's alias flags (its positional aliases are arguments, added by the command). */
export function aliasOptions(option: OptionSpec): Option[] {
  return (option.aliases ?? []).filter((a) => !isArgument(a)).map((a) => new Option(a, aliasHelp(option)));
}

/** The README's options table (between its `<!-- options -->` markers), made from the table. */
export function optionsMarkdown(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const rows = OPTIONS.map((o) => {
    const shown = defaultText(o);
    const commands =
      o.commands.join(', ') + (o.defaultIn && shown && !o.defaultText ? ` (default in ${o.defaultIn.join(', ')})` : '');
    const flags = [o.flag, ...(o.aliases ?? [])]
      .map((f) => (isEnvironment(f) ? `\`${spellingName(f)}\` (environment)` : `\`${f}\``))
      .join(', alias ');
    const keys = [o.key, ...(o.configAliases ?? [])].map((k) => `\`${k}\``).join(', alias ');
    return `| ${flags} | ${o.config ? `${keys} (${o.config})` : ''} | ${commands} | ${shown ? cell(shown) : ''} | ${cell(o.help)} |`;
  });
  return ['| flag | config key | commands | default | what it does |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** A CitiesApiError's message as the CLI says it: each option it names (core/errors.ts) as the table's flag for it, `--min-free`. */
export function inFlags(error: CitiesApiError): string {
  return flagsSaid(error.wording ?? error.message);
}

/** Text as the CLI says it (an error's wording, a line or warning the library gave it): each option it names as the table's flag. */
export function flagsSaid(text: string): string {
  return optionsSaid(text, (key) => {
    const row = OPTIONS.find((option) => option.key === key);
    return row ? spellingName(row.flag) : `--${key}`;
  });
}
