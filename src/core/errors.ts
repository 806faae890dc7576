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
}

/**
 * The one error class the library throws: a message for people, an exit code for the CLI; `cause`,
 * when another error led to it (a caller's callback that threw: that error as thrown).
 */
export class CitiesApiError extends Error {
  override readonly name = 'CitiesApiError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
    readonly problems: readonly Problem[] = [],
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
  }
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
