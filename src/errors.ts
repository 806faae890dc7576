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

/** The one error class the library throws: a message for people, an exit code for the CLI. */
export class CitiesApiError extends Error {
  override readonly name = 'CitiesApiError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
    readonly problems: readonly Problem[] = [],
  ) {
    super(message);
  }
}

export function formatProblem(p: Problem): string {
  const where: string[] = [];
  if (p.file !== undefined) where.push(p.line !== undefined ? `${p.file}:${p.line}` : p.file);
  else if (p.line !== undefined) where.push(`line ${p.line}`);
  if (p.index !== undefined) where.push(`record ${p.index}${p.id !== undefined ? ` (id ${JSON.stringify(p.id)})` : ''}`);
  if (p.field !== undefined) where.push(`field ${p.field}`);
  if ('value' in p && p.field !== undefined) where.push(`value ${showValue(p.value)}`);
  return where.length ? `${where.join(', ')}: ${p.reason}` : p.reason;
}

function showValue(value: unknown): string {
  const text = value === undefined ? 'missing' : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
