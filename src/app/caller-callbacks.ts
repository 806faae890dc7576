import { CitiesApiError, shortText } from '../core/errors.js';

// The callbacks a library caller gives build() and serve(), as the library calls them: what one
// throws is never the caller's own error escaping from deep inside, nor an uncaught exception.
// A callback is called and not awaited: a promise it returns that rejects (an async callback that
// throws) cannot stop the call any more, and is said once as a process warning rather than left
// an unhandled rejection, which would end the caller's process.

export type Callback = (...values: never[]) => unknown;

/**
 * A callback whose throw stops the call (build()'s, serve()'s first build's): what it throws becomes
 * a CitiesApiError naming the callback, the thrown value its `cause`, so that the call rejects with
 * the library's one error class, undone as any failure of it is (the site as it was).
 */
export function ownCallback(called: string, callback: Callback): Callback {
  const warning = once(called);
  return (...values) => {
    try {
      return unawaited(callback(...values), warning);
    } catch (error) {
      throw new CitiesApiError(`${called} callback threw: ${reasonOf(error)}`, 1, [], { cause: error });
    }
  };
}

/**
 * A callback that cannot take the server down (serve()'s log, requestLog): called from timers and
 * request handlers, a throw would be an uncaught exception ending the caller's process. What it
 * throws is said once as a process warning; its lines are dropped.
 */
export function guardedCallback(called: string, callback: Callback): Callback {
  const warning = once(called, ': its lines are dropped');
  return (...values) => {
    try {
      unawaited(callback(...values), warning);
    } catch (error) {
      warning(error);
    }
  };
}

/** A process warning of what a callback threw, said the first time only. */
function once(called: string, after = ''): (error: unknown) => void {
  let warned = false;
  return (error) => {
    if (warned) return;
    warned = true;
    process.emitWarning(`cities-api: ${called} callback threw (${reasonOf(error)})${after}`);
  };
}

/** What a callback returned; a promise's rejection said as a warning. */
function unawaited(result: unknown, warning: (error: unknown) => void): unknown {
  if (result instanceof Promise) result.catch(warning);
  return result;
}

/** What a thrown value says: an Error's message, else the value as text (when it can be made text at all). */
export function reasonOf(error: unknown): string {
  try {
    return shortText(error instanceof Error ? String(error.message) : String(error), 200);
  } catch {
    return 'a value that cannot be made text';
  }
}
