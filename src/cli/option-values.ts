import { CitiesApiError } from '../core/errors.js';
import type { CommandName, ConfigType, OptionValues } from './option-spec.js';
import { OPTIONS, optionsOf, spellingName } from './options.js';

// From what the user gave (command line, config file) to a command's option values, by the option
// table (options.ts): which spelling wins, which config keys exist and what they may hold.

/** Whether a config file's value has the type the table says. */
export function configTypeAccepts(type: ConfigType, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'size':
      return typeof value === 'string' || (typeof value === 'number' && value >= 0);
    case 'list of numbers':
      return typeof value === 'string' || (Array.isArray(value) && value.every((n) => typeof n === 'number'));
    case 'list of strings':
      return typeof value === 'string' || (Array.isArray(value) && value.every((s) => typeof s === 'string'));
    case 'integer or "auto"':
      return Number.isInteger(value) || value === 'auto';
  }
}

/** The config file's keys, each with the type it may hold (older names too). */
export const CONFIG_KEYS: ReadonlyMap<string, ConfigType> = new Map(
  OPTIONS.flatMap((o) => (o.config ? [o.key, ...(o.configAliases ?? [])].map((k) => [k, o.config!] as const) : [])),
);

/** An older config key's current name (`out` → `site`). */
export const CONFIG_ALIASES: ReadonlyMap<string, string> = new Map(
  OPTIONS.flatMap((o) => (o.configAliases ?? []).map((alias) => [alias, o.key] as const)),
);

/** A command line as resolveOptions reads it: the value given under one spelling (a flag, a positional argument or an environment variable), else undefined. */
export interface CommandLine {
  given(spelling: string): unknown;
}

/**
 * A command's option values: from the command line where the flag (or one alias) was given, else
 * from the config file, else the default; parsed by the table's parser. Keys with none of the
 * three are absent. Two spellings of one option given together: exit 2.
 */
export function resolveOptions(
  command: CommandName,
  cli: CommandLine,
  config: Readonly<Record<string, unknown>>,
): Partial<OptionValues> {
  const values: Record<string, unknown> = {};
  for (const option of optionsOf(command)) {
    const given = [option.flag, ...(option.aliases ?? [])].filter((s) => cli.given(s) !== undefined);
    if (given.length > 1)
      throw new CitiesApiError(
        `${given.map(spellingName).join(' and ')} give the same option (${given
          .slice(1)
          .map(spellingName)
          .join(', ')}: older spelling of ${spellingName(option.flag)}): give it once`,
        2,
      );
    const applies = !option.defaultIn || option.defaultIn.includes(command);
    const raw = given.length
      ? cli.given(given[0]!)
      : option.config && config[option.key] !== undefined
        ? config[option.key]
        : applies
          ? option.default
          : undefined;
    if (raw === undefined) continue;
    values[option.key] = option.parse ? option.parse(raw as never) : raw;
  }
  return values as Partial<OptionValues>;
}
