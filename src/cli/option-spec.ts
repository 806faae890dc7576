import type { Collation } from '../core/collation.js';
import type { Compression, Host } from '../site/spec.js';

// The shape of a row of the option table (options.ts), what the resolved values are, and the
// commands rows name: the modules that hold the rows (dataset-, build-, serve-, deploy-options.ts)
// and those that read the table share these.

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
  /**
   * As commander reads it: `--page-sizes <list>`, `--force`, `--no-compress`. Or `$NAME`: a value read
   * from that environment variable alone, never a flag (ps shows a command line to every user) nor
   * a config key (a config file is committed): a secret, the token.
   */
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
  lockWait: number;
  force: boolean;
  durable: boolean;
  port: number;
  host: string;
  writable: boolean;
  token: string;
  watch: boolean;
  failoverOrigin: boolean;
  workers: number | 'auto';
  quiet: boolean;
  previewPages: boolean;
  project: string;
  stack: boolean;
}

/** The commands that build a site: build, and serve (with --data). */
export const BUILDING: readonly CommandName[] = ['build'];
export const BUILDS: readonly CommandName[] = ['build', 'serve'];
/** The commands that write a host's configuration for a built site. */
export const SITE_CONFIGS: readonly CommandName[] = ['config nginx', 'config cloudfront'];
