import { CitiesApiError } from '../core/errors.js';

// An error crossing from a worker to the side that awaits it, as data: a structured clone keeps
// neither an error's class nor its own fields, and callers tell errors apart by both (the CLI
// prints a CitiesApiError's message and exits with its code; a builder waits on a LockBusyError).

/** A class an error may be rebuilt as (found by its name). */
export type ErrorClass = abstract new (...args: never[]) => Error;

export interface ErrorData {
  /** The error's class name; undefined for a value that is not an Error. */
  readonly kind: string | undefined;
  readonly ours: boolean;
  readonly message: string;
  readonly stack: string | undefined;
  /** Own enumerable fields (exitCode, problems, code, path...), cloned as they are. */
  readonly fields: Record<string, unknown>;
}

export function errorData(error: unknown): ErrorData {
  if (!(error instanceof Error))
    return { kind: undefined, ours: false, message: String(error), stack: undefined, fields: {} };
  const fields = Object.fromEntries(Object.entries(error).filter(([, value]) => typeof value !== 'function'));
  return {
    kind: error.constructor.name,
    ours: error instanceof CitiesApiError,
    message: error.message,
    stack: error.stack,
    fields,
  };
}

/**
 * The error again, with its message, fields and stack, of the same class: CitiesApiError, one of
 * `classes` (e.g. LockBusyError), a built-in Error class; else a CitiesApiError for a subclass of
 * it not in `classes`, an Error of the same name for any other.
 */
export function rebuiltError(data: ErrorData, classes: readonly ErrorClass[] = []): Error {
  const error: Error = data.ours ? new CitiesApiError(data.message) : new Error(data.message);
  const known = [CitiesApiError, ...classes].find((kind) => kind.name === data.kind);
  const builtIn = (globalThis as Record<string, unknown>)[data.kind ?? ''];
  const proto = known
    ? (known.prototype as Error)
    : data.ours
      ? CitiesApiError.prototype
      : typeof builtIn === 'function' && builtIn.prototype instanceof Error
        ? (builtIn.prototype as Error)
        : undefined;
  if (proto) Object.setPrototypeOf(error, proto);
  else if (data.kind && data.kind !== 'Error')
    Object.defineProperty(error, 'name', { value: data.kind, configurable: true, writable: true });
  Object.assign(error, data.fields);
  if (data.stack) error.stack = data.stack;
  return error;
}
