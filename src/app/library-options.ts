import { CitiesApiError, optionsSaid, type Problem } from '../core/errors.js';
import { boolean, callback, type Kind, list, plainObject, signal, string, what, whole } from './argument-kinds.js';
import { type Callback, guardedCallback, ownCallback, reasonOf } from './caller-callbacks.js';
import type { BuildOptions } from './build-options.js';
import type { ServeOptions } from './serve-options.js';

// build()'s and serve()'s options as a JavaScript caller may give them: no type checks them there.
// Each is checked here, before anything is read or written, so that a wrong one is a
// CitiesApiError naming it (exit 2, as the CLI's usage errors) rather than a TypeError from deep
// inside, a setting silently ignored (a misspelt name) or a site recorded with a value no build
// knows. A null is an option left out. What each value may be beyond its type is the parsers'
// (spec.ts: page sizes, orderings, collation...), which the CLI's values go through too.

/** A callback serve() calls while it serves (its log, its request log): one that throws is not let take the server down. */
const told: Kind = (v) => callback(v);

const BUILD: Record<keyof BuildOptions, Kind> = {
  data: string,
  dataName: string,
  strict: boolean,
  out: string,
  baseUrl: string,
  collation: string,
  pageSizes: list('number', '[10, 20, 50, 100]'),
  orderings: list('string', "['name_en', '-name_ar']"),
  compression: string,
  compress: boolean,
  liveUrl: string,
  host: string,
  maxFiles: whole('a whole number of files, 1 or more (e.g. 1000000)', 1),
  force: boolean,
  durable: boolean,
  minFree: whole('a whole number of bytes, 0 or more', 0),
  lockWait: whole('a whole number of ms, 0 or more', 0),
  cwd: string,
  background: boolean,
  onRead: callback,
  signal,
  log: callback,
  onWarning: callback,
  onStart: callback,
  onProgress: callback,
};

const FIRST_BUILD = { onRead: callback, onStart: callback, onProgress: callback, signal };

const SERVE: Record<keyof ServeOptions, Kind> = {
  dir: string,
  data: string,
  dataName: string,
  strict: boolean,
  onWarning: callback,
  collation: string,
  pageSizes: BUILD.pageSizes,
  orderings: BUILD.orderings,
  durable: boolean,
  baseUrl: string,
  // A string of digits too: `process.env.PORT` as it is (node:net takes it so).
  port: (v) =>
    whole(
      'a whole number from 0 to 65535 (0: any free port)',
      0,
      65535,
    )(typeof v === 'string' && /^\d{1,5}$/.test(v) ? Number(v) : v),
  host: string,
  writable: boolean,
  token: string,
  watch: boolean,
  lockWait: whole('a whole number of ms, 0 or more', 0),
  limits: plainObject,
  failoverOrigin: boolean,
  log: told,
  requestLog: told,
  previewPages: boolean,
  workers: (v) => (v === 'auto' || typeof v === 'number' ? undefined : "a number of processes, or 'auto'"),
  firstBuild: plainObject,
};

/**
 * Who reads the lines and warnings build() or serve() gives its `log` and `onWarning`: a library
 * caller, the options they name (core/errors.ts) said in its own names; or the CLI, which is given
 * them marked and says them as its flags (cli/main.ts), as it says a thrown error's `wording`.
 */
export type Reader = 'library' | 'cli';

/** build()'s options checked (see above), nulls left out. */
export function buildOptionsOf(given: unknown, reader: Reader = 'library'): BuildOptions {
  const options = checkedOptions('build', given, BUILD, 'BuildOptions');
  return (reader === 'library' ? inCallerNames('build', options) : options) as unknown as BuildOptions;
}

/** serve()'s options checked (see above), nulls left out; none given is every default. */
export function serveOptionsOf(given: unknown, reader: Reader = 'library'): ServeOptions {
  const options = checkedOptions('serve', given ?? {}, SERVE, 'ServeOptions');
  if (options.firstBuild)
    options.firstBuild = checkedOptions('serve', options.firstBuild, FIRST_BUILD, 'ServeOptions', 'firstBuild.');
  return (reader === 'library' ? inCallerNames('serve', options) : options) as ServeOptions;
}

/** The options with their `log` and `onWarning` given each line (a warning's reason) with the options it names said as `fn` names them. */
export function inCallerNames(fn: string, options: Record<string, unknown>): Record<string, unknown> {
  const said = (text: string) => optionsSaid(text, libraryName(fn));
  const told = (value: unknown) =>
    typeof value === 'string'
      ? said(value)
      : typeof (value as Problem | null)?.reason === 'string'
        ? { ...(value as Problem), reason: said((value as Problem).reason) }
        : value;
  for (const key of ['log', 'onWarning']) {
    const callback = options[key] as ((value: unknown) => unknown) | undefined;
    if (callback) options[key] = (value: unknown) => callback(told(value));
  }
  return options;
}

/** The options `given` to `fn`, each checked by its kind, a callback wrapped (caller-callbacks.ts), nulls left out. */
export function checkedOptions(
  fn: string,
  given: unknown,
  kinds: Record<string, Kind>,
  type: string,
  prefix = '',
): Record<string, unknown> {
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new CitiesApiError(`${fn}() takes an object of options (see its type, ${type}), not ${what(given)}`, 2);
  const options: Record<string, unknown> = {};
  for (const [name, value] of entriesOf(fn, given)) {
    const kind = kinds[name];
    if (!kind) throw new CitiesApiError(`${fn}() has no option \`${prefix}${name}\`${nearest(name, kinds)}`, 2);
    if (value == null) continue;
    const expected = kind(value);
    if (expected)
      throw new CitiesApiError(`${fn}() option \`${prefix}${name}\` must be ${expected}, not ${what(value)}`, 2);
    // A callback is wrapped (caller-callbacks.ts): what it throws a CitiesApiError naming it, or a warning.
    const called = `${fn}()'s \`${prefix}${name}\``;
    options[name] =
      kind === callback
        ? ownCallback(called, value as Callback)
        : kind === told
          ? guardedCallback(called, value as Callback)
          : value;
  }
  return options;
}

/** An options object's entries, each getter read once; one that throws (or a Proxy's trap) a CitiesApiError. */
function entriesOf(fn: string, given: object): [string, unknown][] {
  try {
    return Object.entries(given);
  } catch (error) {
    throw new CitiesApiError(`${fn}() could not read its options: ${reasonOf(error)}`, 2, [], { cause: error });
  }
}

/** `(did you mean pageSizes?)` for a name spelt in another case or with a letter off, else the names there are. */
function nearest(name: string, kinds: Record<string, Kind>): string {
  const names = Object.keys(kinds);
  const close = names.find((known) => known.toLowerCase() === name.toLowerCase() || oneOff(known, name));
  return close ? ` (did you mean \`${close}\`?)` : `; its options: ${names.join(', ')}`;
}

/** Whether two names differ by one letter changed, added or removed. */
function oneOff(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const tail = (x: string, y: string) => x.slice(i + 1) === y.slice(i + (a.length === b.length ? 1 : 0));
  return a.length >= b.length ? tail(a, b) : tail(b, a);
}

/**
 * The options an error of an export names, said as that function's own options name them
 * (a message names them by the CLI's keys: core/errors.ts): where a name differs from the key.
 */
const LIBRARY_NAMES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  build: { site: 'out', builtFor: 'host' },
  serve: { site: 'dir' },
  // readDataset(file): the dataset is its argument.
  readDataset: { data: 'file' },
};

/** An option as `fn`'s options name it, `` `out` `` for the key `site` of build(). */
function libraryName(fn: string): (key: string) => string {
  return (key) => `\`${LIBRARY_NAMES[fn]?.[key] ?? key}\``;
}

/** An error of an export (build(), serve(), readDataset()...), the options its message names said as that function's options name them. */
export function inLibraryWords(fn: string, error: unknown): unknown {
  if (error instanceof CitiesApiError && error.wording) error.message = optionsSaid(error.wording, libraryName(fn));
  return error;
}
