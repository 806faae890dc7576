import { Option } from 'commander';
import type { Collation } from '../core/collation.js';
import { CitiesApiError } from '../core/errors.js';
import { checkLiveUrl } from '../hosts/live-url.js';
import { DEFAULT_MAX_FILES } from '../site/size.js';
import {
  COMPRESSIONS,
  type Compression,
  DEFAULT_BASE_URL,
  DEFAULT_COLLATION,
  DEFAULT_COMPRESSION,
  DEFAULT_DATA,
  DEFAULT_OUT,
  DEFAULT_PAGE_SIZES,
  HOSTS,
  type Host,
  normalizeBaseUrl,
  parseCollation,
  parseCompression,
  parseHost,
  parseMaxFiles,
  parseMinFree,
  parseOrderings,
  parsePageSizes,
} from '../site/spec.js';

// The option table: every flag of every command, and every key of cities-api.config.json, with its
// default, its parser and its help. Commander's options and --help, the config file's checks and the
// README's table are all made from it, so a key cannot be accepted and then ignored.

export type CommandName = 'build' | 'validate' | 'serve' | 'config nginx' | 'config cloudfront' | 'edge';

/** What a config file may hold for a key. */
export type ConfigType =
  | 'string'
  | 'integer'
  | 'boolean'
  | 'size'
  | 'list of numbers'
  | 'list of strings'
  | 'integer or "auto"';

export interface OptionSpec {
  /** The name the value goes by in the resolved options, and its key in the config file. */
  readonly key: keyof OptionValues;
  /** As commander reads it: `--page-sizes <list>`, `--force`, `--no-compress`. */
  readonly flag: string;
  /**
   * Older spellings of the same option, still accepted and listed in --help as aliases: flags
   * (`--out <dir>`) or a positional argument (`[dir]`). Given together with the flag: exit 2.
   */
  readonly aliases?: readonly string[];
  /** Older names of its config key, still read (both in one file: exit 2). */
  readonly configAliases?: readonly string[];
  readonly help: string;
  /** Where one command reads it otherwise (serve builds only when given --data). */
  readonly helpIn?: Partial<Record<CommandName, string>>;
  readonly commands: readonly CommandName[];
  /** What cities-api.config.json may hold for it; absent: a flag only. */
  readonly config?: ConfigType;
  /** Used when neither the flag nor the config gives a value, in `defaultIn` (all its commands when absent). */
  readonly default?: string | number | boolean | readonly number[];
  readonly defaultIn?: readonly CommandName[];
  /** How --help and the README describe the default where the value alone would not say it. */
  readonly defaultText?: string;
  readonly choices?: readonly string[];
  /** From the flag's text or the config's JSON value to the value used. */
  readonly parse?: (value: never) => unknown;
}

/** Every option's value once resolved (flag, else config file, else default). */
export interface OptionValues {
  data: string;
  strict: boolean;
  site: string;
  baseUrl: string;
  collation: Collation;
  pageSizes: number[];
  orderings: string[];
  compress: boolean;
  compression: Compression;
  liveUrl: string;
  builtFor: Host;
  maxFiles: number;
  minFree: number;
  force: boolean;
  port: number;
  host: string;
  writable: boolean;
  watch: boolean;
  failoverOrigin: boolean;
  workers: number | 'auto';
  quiet: boolean;
  previewPages: boolean;
  project: string;
  stack: boolean;
}

function parsePort(value: string | number): number {
  const text = String(value);
  if (!/^\d+$/.test(text) || Number(text) > 65535)
    throw new CitiesApiError(`invalid port "${text}": expected 0-65535`, 2);
  return Number(text);
}

function parseWorkers(value: string | number): number | 'auto' {
  const text = String(value);
  if (text === 'auto') return 'auto';
  if (!/^[1-9]\d{0,3}$/.test(text) || Number(text) > 1024)
    throw new CitiesApiError(`invalid --workers "${text}": expected a whole number from 1 to 1024, or auto`, 2);
  return Number(text);
}

const BUILDING: CommandName[] = ['build'];
const BUILDS: CommandName[] = ['build', 'serve'];
const SITE_CONFIGS: CommandName[] = ['config nginx', 'config cloudfront'];

export const OPTIONS: readonly OptionSpec[] = [
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
  {
    key: 'baseUrl',
    flag: '--base-url <url>',
    help: 'URL the API is published at, used in next/previous links',
    helpIn: { serve: "URL the API is published at (default: the site's own, or this server's URL when building)" },
    commands: BUILDS,
    config: 'string',
    default: DEFAULT_BASE_URL,
    defaultIn: BUILDING,
  },
  {
    key: 'collation',
    flag: '--collation <name>',
    help: 'text order: ICU per language (locale), or Unicode code point',
    helpIn: { serve: "text order when building (default: the site's)" },
    commands: BUILDS,
    config: 'string',
    default: DEFAULT_COLLATION,
    defaultIn: BUILDING,
    choices: ['locale', 'codepoint'],
    parse: parseCollation,
  },
  {
    key: 'pageSizes',
    flag: '--page-sizes <list>',
    help: 'page sizes to precompute, e.g. 10,20,50,100',
    helpIn: { serve: "page sizes to precompute when building (default: the site's)" },
    commands: BUILDS,
    config: 'list of numbers',
    default: DEFAULT_PAGE_SIZES,
    defaultIn: BUILDING,
    parse: parsePageSizes,
  },
  {
    key: 'orderings',
    flag: '--orderings <list>',
    help: 'orderings to precompute: all, or e.g. default,name_en,-name_en',
    helpIn: { serve: "orderings to precompute when building (default: the site's)" },
    commands: BUILDS,
    config: 'list of strings',
    default: 'all',
    defaultIn: BUILDING,
    parse: parseOrderings,
  },
  {
    key: 'compression',
    flag: '--compression <level>',
    help: 'how the .gz/.br next to each page are made: fast (gzip 6, brotli 2), best (gzip 9, brotli 11: smaller files for a much slower build, docs/deploy.md), or none',
    commands: BUILDING,
    config: 'string',
    default: DEFAULT_COMPRESSION,
    choices: COMPRESSIONS,
    parse: parseCompression,
  },
  {
    key: 'compress',
    flag: '--no-compress',
    help: 'the older spelling of --compression none, still accepted',
    commands: BUILDING,
    config: 'boolean',
    default: true,
  },
  {
    key: 'liveUrl',
    flag: '--live-url <url>',
    help: 'where static hosts send queries no file answers (Netlify _redirects, the CloudFront function); without one they answer a 404 saying so',
    commands: BUILDING,
    config: 'string',
  },
  {
    key: 'liveUrl',
    flag: '--live-url <url>',
    help: 'where cities-api serve listens',
    commands: ['config nginx'],
    default: 'http://127.0.0.1:8080',
    parse: normalizeBaseUrl,
  },
  {
    key: 'liveUrl',
    flag: '--live-url <url>',
    help: 'origin for queries no file answers (a cities-api serve, or the function URL of cities-api edge lambda)',
    commands: ['config cloudfront'],
    defaultText: "the site's --live-url, else a 404 saying so",
    parse: checkLiveUrl,
  },
  {
    key: 'stack',
    flag: '--stack',
    help: 'print a CloudFormation template (YAML) of the whole deployment instead: bucket, origin access control, this function, policies, distribution (docs/cloudfront.md)',
    commands: ['config cloudfront'],
  },
  {
    key: 'builtFor',
    flag: '--for <host>',
    help: "build for that host alone: cloudflare (Workers' static assets: no .gz/.br, no other host's files, each list's first pages within its 20,000 files; the Worker computes the rest: docs/cloudflare.md)",
    commands: BUILDING,
    config: 'string',
    defaultText: 'any host',
    choices: HOSTS,
    parse: parseHost,
  },
  {
    key: 'maxFiles',
    flag: '--max-files <n>',
    help: 'refuse to build a site of more files than this',
    commands: BUILDING,
    config: 'integer',
    default: DEFAULT_MAX_FILES,
    parse: parseMaxFiles,
  },
  {
    key: 'minFree',
    flag: '--min-free <size>',
    help: "free space the build leaves on the site's filesystem, e.g. 500MB, 2GB, 0",
    commands: BUILDING,
    config: 'size',
    defaultText: '5% of it, at most 1GB',
    parse: parseMinFree,
  },
  {
    key: 'force',
    flag: '--force',
    help: 'rewrite every file, reusing nothing of the old site (a Node with other ICU/Unicode data rebuilds without it)',
    commands: BUILDING,
  },
  {
    key: 'port',
    flag: '--port <number>',
    help: 'port to listen on (0: any free port)',
    commands: ['serve'],
    config: 'integer',
    default: 8080,
    parse: parsePort,
  },
  {
    key: 'host',
    flag: '--host <address>',
    help: 'address to listen on',
    commands: ['serve'],
    config: 'string',
    default: '127.0.0.1',
  },
  {
    key: 'workers',
    flag: '--workers <n>',
    help: 'server processes sharing the port (node:cluster), auto: one per CPU; this process stays the one writer (builds, --watch, POST)',
    commands: ['serve'],
    config: 'integer or "auto"',
    default: 1,
    parse: parseWorkers,
  },
  {
    key: 'writable',
    flag: '--writable',
    help: 'accept POST to create cities (clients send Authorization: Token $CITIES_API_TOKEN)',
    commands: ['serve'],
  },
  {
    key: 'watch',
    flag: '--watch',
    help: 'rebuild and answer from the new data when the dataset file changes',
    commands: ['serve'],
  },
  {
    key: 'failoverOrigin',
    flag: '--failover-origin',
    help: "also answer the site's file paths, as the origin a CDN fails over to when its copy lacks a file (docs/cloudfront.md)",
    commands: ['serve'],
  },
  {
    key: 'quiet',
    flag: '--quiet',
    help: 'print no line per request (by default one per request in the Common Log Format, then the ms it took)',
    commands: ['serve'],
    config: 'boolean',
  },
  {
    key: 'previewPages',
    flag: '--no-preview-pages',
    help: "answer / and /openapi.json with Django's 404, as the reference does, rather than a page linking the API and the site's OpenAPI document",
    commands: ['serve'],
    config: 'boolean',
    default: true,
  },
  {
    key: 'project',
    flag: '--project <dir>',
    aliases: ['--out <dir>'],
    help: 'directory the edge project is written to (docs/deploy.md)',
    commands: ['edge'],
    defaultText: 'edge-PLATFORM',
  },
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

/** A spelling as messages name it: `--out`, `[dir]`. */
export function spellingName(spelling: string): string {
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
    const flags = [o.flag, ...(o.aliases ?? [])].map((f) => `\`${f}\``).join(', alias ');
    const keys = [o.key, ...(o.configAliases ?? [])].map((k) => `\`${k}\``).join(', alias ');
    return `| ${flags} | ${o.config ? `${keys} (${o.config})` : ''} | ${commands} | ${shown ? cell(shown) : ''} | ${cell(o.help)} |`;
  });
  return ['| flag | config key | commands | default | what it does |', '|---|---|---|---|---|', ...rows].join('\n');
}
