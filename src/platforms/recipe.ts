import { relative, sep } from 'node:path';
import type { Measure, Measured, PlatformLimit } from './limits.js';

// A platform's recipe: what `cities-api edge <platform>` puts in its project, decided before anything is
// written. A recipe may read (the site's files, a config the user already has) but never writes: it
// returns the files, and app/edge-project.ts, the one driver for every platform, writes them. Two
// kinds of files: cities-api's (rewritten on every run, only if nobody changed them since) and the
// user's (the platform's config and a few-line entry module, written once when missing). Each
// platform's folder holds its adapter (bundled into lib/edge/, run by the platform) and its recipe
// (run by Node, never bundled).

/** The edge platforms, in `cities-api edge --help`'s order; recipes.ts gives each its recipe. */
export const PLATFORMS = ['cloudflare', 'deno', 'netlify', 'lambda'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** The edge bundle's name in a project: the adapters, built with the package. */
export const BUNDLE_NAME = 'cities-api-edge.js';
/** The site's settings as a module, beside the bundle; its default export is what an adapter takes. */
export const DATA_NAME = 'cities-site.js';

export interface ProjectFile {
  /** An absolute path: in the project's directory, or in the site's (Cloudflare's .assetsignore). */
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** What a recipe is given. */
export interface RecipeContext {
  /** The built site's directory and the project's, absolute. */
  readonly site: string;
  readonly out: string;
  /** The endpoint's path on the site's mount, percent-encoded as a URL path (ends in /). */
  readonly endpoint: string;
  readonly bundle: Uint8Array;
  /** cities-api's code in `dir`: the bundle and the site's settings module, and the site's directory relative to `dir` (ends in /). */
  code(dir: string): { readonly siteDir: string; readonly files: readonly ProjectFile[] };
  /** The figure of one of the recipe's limits (Infinity when it has none). */
  limit(measure: Measure): number;
  /** Refuses the run, nothing written, if a measured figure is over its limit: call it as soon as the figure is known. */
  check(measured: Measured): void;
}

/** A project, decided. */
export interface ProjectPlan {
  /** cities-api's files: rewritten on every run. */
  readonly ours: readonly ProjectFile[];
  /** The user's: written only where missing. */
  readonly theirs: readonly ProjectFile[];
  /** The one command that deploys it, run in the project's directory. */
  readonly deploy: string;
  /** What the platform's tools will complain of in the site, and what to do. */
  readonly warnings?: readonly string[];
}

export interface EdgeRecipe {
  /** The platform's name as `cities-api edge <platform>` takes it. */
  readonly platform: string;
  /** The platform's name in messages: "Cloudflare Workers". */
  readonly title: string;
  /** Its documented limits, each with its source; the ones with a `measure` are checked before writing. */
  readonly limits: readonly PlatformLimit[];
  /** Its guide in docs/ (shipped with the package), which lists the limits. */
  readonly doc: string;
  /** Decides the project's files; throws CitiesApiError when the site or the directories cannot make one. */
  project(context: RecipeContext): Promise<ProjectPlan>;
}

/** A file of the project from text. */
export function textFile(path: string, text: string): ProjectFile {
  return { path, bytes: new TextEncoder().encode(text) };
}

/** The entry module a user owns: imports the adapter and the site's settings, a few lines for the platform. */
export function entryModule(adapter: string, body: string, named = '', first = ''): string {
  return `// Written once by cities-api edge; yours to edit (it is never rewritten). It imports cities-api's files beside it.\n${first}import { ${adapter} } from './${BUNDLE_NAME}';\nimport site${named} from './${DATA_NAME}';\n\n${body}`;
}

/** `to` relative to `from` with forward slashes, starting with `.` (`./dist`, `../site`). */
export function posixRelative(from: string, to: string): string {
  const path = relative(from, to).split(sep).join('/');
  return path.startsWith('.') ? path : `./${path}`;
}

/** A word a POSIX shell reads back as `text`. */
export function shellWord(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
