/** One problem found in user input, located as precisely as the input allows. */
export interface Problem {
  file?: string;
  /** Physical line of a CSV file (1-based). */
  line?: number;
  /** Index of a JSON record (0-based) and its id when it has one. */
  index?: number;
  id?: unknown;
  field?: string;
  value?: unknown;
  reason: string;
  /** A warning of the settings alone, whatever the data (a base URL Netlify would misread): a server rebuilding says it once. */
  ofSettings?: boolean;
}

/**
 * The one error class the library throws: a message for people, an exit code for the CLI; `cause`,
 * when another error led to it (a caller's callback that threw: that error as thrown).
 */
export class CitiesApiError extends Error {
  override readonly name = 'CitiesApiError';
  /** The message with the options it names as optionNamed() put them, when it names any: the CLI says them as its flags. */
  declare readonly wording?: string;
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
    readonly problems: readonly Problem[] = [],
    options?: { readonly cause?: unknown },
  ) {
    super(
      optionsSaid(message, (key) => `\`${key}\``),
      options,
    );
    if (this.message !== message) Object.assign(this, { wording: message });
  }
}

// An option a message names is named by its key in the CLI's option table (`port`, `minFree`,
// `site`): the CLI says it as that row's flag (`--port`, `--min-free`, `--site`), a library caller
// reads the name its own options give it (`port`, `minFree`; build()'s `out`, serve()'s `dir`).
// Each says it from its own table; the message is written once, with the key in a marker.
const MARK = '\u0000';
const MARKED = /\u0000(\w+)\u0000/g;

/** An option named in a CitiesApiError's message: said as `key` to a library caller (or its own name for it), as its flag by the CLI. */
export function optionNamed(key: string): string {
  return `${MARK}${key}${MARK}`;
}

/** A message (a CitiesApiError's `wording`) with each option it names said by `name`. */
export function optionsSaid(wording: string, name: (key: string) => string): string {
  return wording.includes(MARK) ? wording.replace(MARKED, (_, key: string) => name(key)) : wording;
}

/**
 * What an error says, the options it names still marked (a CitiesApiError's `wording`): for a message
 * built from it, a log line or a new error, which the caller's side then says in its own names.
 */
export function wordingOf(error: unknown): string {
  if (error instanceof CitiesApiError) return error.wording ?? error.message;
  return error instanceof Error ? error.message : String(error);
}

/** `file:line: field F, value V: reason`, or `file: record N (id X): ...` for JSON records. */
export function formatProblem(p: Problem): string {
  const place: string[] = [];
  if (p.file !== undefined) place.push(p.line !== undefined ? `${p.file}:${p.line}` : p.file);
  else if (p.line !== undefined) place.push(`line ${p.line}`);
  if (p.index !== undefined) place.push(`record ${p.index}${p.id !== undefined ? ` (id ${showValue(p.id)})` : ''}`);
  const what = p.field !== undefined ? `field ${shortText(p.field)}, value ${showValue(p.value)}: ` : '';
  return `${place.length ? `${place.join(': ')}: ` : ''}${what}${p.reason}`;
}

/** A value from user input as JSON, cut to 80 characters: a message never repeats a whole record. */
export function showValue(value: unknown): string {
  return shortText(value === undefined ? 'missing' : (JSON.stringify(value) ?? String(value)));
}

/** Text cut to `max` characters (whole code points), with `...` where it was cut. */
export function shortText(text: string, max = 80): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 3);
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}...`;
}
