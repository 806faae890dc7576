import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CitiesApiError, shortText, showValue } from '../core/errors.js';

export const CONFIG_FILE = 'cities-api.config.json';

/** Defaults a project can keep in `cities-api.config.json`; command-line flags override them. */
export interface ProjectConfig {
  data?: string;
  out?: string;
  baseUrl?: string;
  collation?: string;
  pageSizes?: string | number[];
  orderings?: string | string[];
  port?: number;
  host?: string;
  liveUrl?: string;
  maxFiles?: number;
  minFree?: string | number;
}

const TYPES: Record<keyof ProjectConfig, (v: unknown) => boolean> = {
  data: isString,
  out: isString,
  baseUrl: isString,
  collation: isString,
  pageSizes: (v) => isString(v) || (Array.isArray(v) && v.every((n) => typeof n === 'number')),
  orderings: (v) => isString(v) || (Array.isArray(v) && v.every(isString)),
  port: (v) => Number.isInteger(v),
  host: isString,
  liveUrl: isString,
  maxFiles: (v) => Number.isInteger(v),
  minFree: (v) => isString(v) || (typeof v === 'number' && v >= 0),
};

function isString(v: unknown): v is string {
  return typeof v === 'string';
}

/** The config of the working directory, or {} when it has none. */
export async function loadConfig(cwd: string): Promise<ProjectConfig> {
  const file = join(cwd, CONFIG_FILE);
  let text: string;
  try {
    // A device or a pipe under that name is refused before it is read (it may never end).
    if (!(await stat(file)).isFile()) throw new CitiesApiError(`cannot read ${file}: it is not a regular file`, 2);
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof CitiesApiError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CitiesApiError(`cannot read ${file}: ${(error as Error).message}`, 2);
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw new CitiesApiError(`${file} is not valid JSON: ${(error as Error).message}`, 2);
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new CitiesApiError(`${file} must hold a JSON object`, 2);
  for (const [key, value] of Object.entries(config)) {
    const check = TYPES[key as keyof ProjectConfig];
    if (!check) throw new CitiesApiError(`${file}: unknown setting "${shortText(key)}" (known: ${Object.keys(TYPES).join(', ')})`, 2);
    if (!check(value)) throw new CitiesApiError(`${file}: setting "${shortText(key)}" has the wrong type (${showValue(value)})`, 2);
  }
  return config as ProjectConfig;
}
