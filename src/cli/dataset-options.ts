import { DEFAULT_DATA, DEFAULT_OUT } from '../site/spec.js';
import { BUILDING, type OptionSpec, SITE_CONFIGS } from './option-spec.js';

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
