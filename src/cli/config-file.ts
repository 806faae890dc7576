import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { CitiesApiError, shortText, showValue } from '../core/errors.js';
import { CONFIG_ALIASES, CONFIG_KEYS, configTypeAccepts } from './option-values.js';

export const CONFIG_FILE = 'cities-api.config.json';

/** A project's config file: its values (keys of the option table), paths in them resolved against its directory. */
export type ProjectConfig = Readonly<Record<string, unknown>>;

/** Config keys holding a path, read relative to the config file's directory. */
const PATH_KEYS = ['data', 'site'];

/**
 * The config given with `--config FILE` (which must exist), else `cities-api.config.json` of the
 * working directory, or {} when there is none.
 */
export async function loadConfig(cwd: string, explicit?: string): Promise<ProjectConfig> {
  const file = explicit === undefined ? join(cwd, CONFIG_FILE) : resolve(cwd, explicit);
  let text: string;
  try {
    // A device or a pipe under that name is refused before it is read (it may never end).
    if (!(await stat(file)).isFile()) throw new CitiesApiError(`cannot read ${file}: it is not a regular file`, 2);
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof CitiesApiError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && explicit === undefined) return {};
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new CitiesApiError(`--config ${explicit}: no such file (${file})`, 2);
    throw new CitiesApiError(`cannot read ${file}: ${(error as Error).message}`, 2);
  }
  let config: unknown;
  try {
    // Saved as UTF-8 with a byte order mark (Notepad), as a dataset may be: the mark is not JSON.
    config = JSON.parse(text.startsWith('\ufeff') ? text.slice(1) : text);
  } catch (error) {
    throw new CitiesApiError(`${file} is not valid JSON: ${(error as Error).message}`, 2);
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new CitiesApiError(`${file} must hold a JSON object`, 2);
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    const type = CONFIG_KEYS.get(key);
    if (!type)
      throw new CitiesApiError(
        `${file}: unknown setting "${shortText(key)}" (known: ${[...CONFIG_KEYS.keys()].join(', ')})`,
        2,
      );
    if (!configTypeAccepts(type, value))
      throw new CitiesApiError(
        `${file}: setting "${shortText(key)}" has the wrong type (${showValue(value)}), expected ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`,
        2,
      );
    // An older name (out) is read as the current one (site); both in one file contradict.
    const name = CONFIG_ALIASES.get(key) ?? key;
    if (name !== key && name in config)
      throw new CitiesApiError(
        `${file}: settings "${key}" and "${name}" are the same ("${key}" is its older name): keep "${name}" only`,
        2,
      );
    values[name] =
      PATH_KEYS.includes(name) && !isAbsolute(value as string) ? resolve(dirname(file), value as string) : value;
  }
  return values;
}
