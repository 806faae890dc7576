import { DEFAULT_LOCK_WAIT } from '../app/build-options.js';
import { DEFAULT_DATA, DEFAULT_OUT } from '../site/spec.js';
import { CitiesApiError } from '../core/errors.js';
import { BUILDING, BUILDS, type OptionSpec, SITE_CONFIGS } from './option-spec.js';

/** --lock-wait's seconds: a whole number from 0 to 3600. */
function parseLockWait(value: string | number): number {
  const text = String(value).trim();
  if (!/^\d{1,4}$/.test(text) || Number(text) > 3600)
    throw new CitiesApiError(`invalid --lock-wait "${text}": expected a whole number of seconds from 0 to 3600`, 2);
  return Number(text);
}

// Rows of the option table (options.ts): the dataset a command reads and the site directory it
// writes or reads.

export const DATASET_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'data',
    flag: '--data <file>',
    help: 'dataset, .csv or .json',
    helpIn: {
      serve: 'dataset to build the site directory from before serving; without one, the site is served as built',
    },
    commands: ['build', 'validate', 'serve'],
    config: 'string',
    default: DEFAULT_DATA,
    defaultIn: ['build', 'validate'],
  },
  {
    key: 'strict',
    flag: '--strict',
    help: 'refuse dataset columns (CSV) or keys (JSON) that are not city fields; without it they are ignored, with one warning naming them',
    commands: ['build', 'validate', 'serve'],
    config: 'boolean',
  },
  {
    key: 'lockWait',
    flag: '--lock-wait <seconds>',
    help: "how long to wait for the dataset's lock (a writable server adding cities) or the site's (another build of it) before giving up",
    helpIn: {
      serve:
        "how long a POST or a build waits for the dataset's or the site's lock another process holds before giving up",
    },
    commands: BUILDS,
    config: 'integer',
    // The library's, in seconds: build() and serve() are always given the CLI's.
    default: DEFAULT_LOCK_WAIT / 1000,
    parse: parseLockWait,
  },
  // The site directory is --site in every command (the site is what build writes, what serve,
  // config and edge read); build's --out and serve's positional [dir] are its older spellings.
  {
    key: 'site',
    flag: '--site <dir>',
    aliases: ['--out <dir>'],
    help: 'site directory, written by the build',
    commands: BUILDING,
    config: 'string',
    configAliases: ['out'],
    default: DEFAULT_OUT,
  },
  {
    key: 'site',
    flag: '--site <dir>',
    aliases: ['[dir]'],
    help: 'site directory to serve (built there first with --data)',
    commands: ['serve'],
    config: 'string',
    default: DEFAULT_OUT,
  },
  {
    key: 'site',
    flag: '--site <dir>',
    help: 'built site directory',
    commands: [...SITE_CONFIGS, 'edge'],
    config: 'string',
    default: DEFAULT_OUT,
  },
];
