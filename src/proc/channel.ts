import { type ErrorClass, type ErrorData, errorData, rebuiltError } from './error-data.js';

// Typed calls and events between the two ends of a port (a thread's, a child process's IPC), both
// ways: a call answered with its result or its error (rebuilt with its class and fields), a call
// cancelled by its caller's AbortSignal (the handler hears it and decides how to end), and the
// loss of the other end, which fails the calls still waiting.

/** What one end answers (calls: one argument in, a result out) and tells (events: one payload each). */
export interface Side {
  readonly calls: object;
  readonly events: object;
}
/** An end that answers nothing and tells nothing. */
export interface Silent extends Side {
  readonly calls: Record<never, never>;
  readonly events: Record<never, never>;
}
/** A pair: what the parent and the worker each answer and tell, and the data a thread starts with. */
export interface Protocol {
  readonly parent: Side;
  readonly worker: Side;
  readonly data?: unknown;
}

type CallName<S extends Side> = keyof S['calls'] & string;
type ArgOf<F> = F extends () => unknown ? undefined : F extends (arg: infer A) => unknown ? A : never;
type ResultOf<F> = F extends (...args: never[]) => infer R ? Awaited<R> : never;
type EventName<S extends Side> = keyof S['events'] & string;
type Answer<R> = R | Transferred<R>;

/** The messages on the wire. */
export type Wire =
  /** The worker's end listens: what the parent sent before is sent now. */
  | { readonly k: 'hello' }
  | { readonly k: 'call'; readonly id: number; readonly name: string; readonly arg: unknown; readonly signal: boolean }
  | { readonly k: 'cancel'; readonly id: number }
  | { readonly k: 'reply'; readonly id: number; readonly value: unknown }
  | { readonly k: 'throw'; readonly id: number; readonly error: ErrorData }
  | { readonly k: 'event'; readonly name: string; readonly payload: unknown };

/** How an end sends and receives; `close` lets the other end go (a thread or child process then ends). */
export interface Port {
  /** `transfer`: buffers moved, not copied (a thread's port; a process's copies them). */
  send(message: Wire, transfer?: readonly ArrayBuffer[]): void;
  receive(listener: (message: Wire) => void): void;
  close?(): void;
}

/**
 * A handler's result whose large buffers are moved to the caller instead of copied (the sender
 * must not use them again): a thread hands over what it made in O(1), whatever its size.
 */
export class Transferred<T> {
  constructor(
    readonly value: T,
    readonly buffers: readonly ArrayBuffer[],
  ) {}
}

interface Waiting {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  done(): void;
}
type Handler = (arg: unknown, signal: AbortSignal) => unknown;
const NEVER = new AbortController().signal;

/** One end of a pair: calls and events to the other end (`Theirs`), handlers and events of its own (`Mine`). */
export class Channel<Mine extends Side, Theirs extends Side> {
  private calls = 0;
  private readonly waiting = new Map<number, Waiting>();
  private readonly handlers = new Map<string, Handler>();
  private readonly listeners = new Map<string, ((payload: never) => void)[]>();
  private readonly running = new Map<number, AbortController>();
  /** What waits for the worker's hello (the parent's end only). */
  private queue: [Wire, (readonly ArrayBuffer[])?][] | null;
  private lostWith: Error | undefined;

  /** `end`: the parent's waits for the worker's hello before it sends; the worker's says hello. */
  constructor(
    private readonly port: Port,
    end: 'parent' | 'worker',
    private readonly errors: readonly ErrorClass[] = [],
  ) {
    this.queue = end === 'parent' ? [] : null;
    port.receive((message) => this.receive(message));
    if (end === 'worker') port.send({ k: 'hello' });
  }

  /** Calls the other end's handler `name`; aborting `signal` tells that handler. Fails if the other end is lost first. */
  call<K extends CallName<Theirs>>(
    name: K,
    arg: ArgOf<Theirs['calls'][K]>,
    signal?: AbortSignal,
  ): Promise<ResultOf<Theirs['calls'][K]>> {
    if (this.lostWith) return Promise.reject(this.lostWith);
    const id = ++this.calls;
    return new Promise((resolve, reject) => {
      const cancel = () => this.post({ k: 'cancel', id });
      signal?.addEventListener('abort', cancel, { once: true });
      const done = () => signal?.removeEventListener('abort', cancel);
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject, done });
      this.post({ k: 'call', id, name, arg, signal: !!signal });
      if (signal?.aborted) cancel();
    });
  }

  /** Answers the other end's calls `name` (a handler per name). */
  handle<K extends CallName<Mine>>(
    name: K,
    handler: (
      arg: ArgOf<Mine['calls'][K]>,
      signal: AbortSignal,
    ) => Answer<ResultOf<Mine['calls'][K]>> | Promise<Answer<ResultOf<Mine['calls'][K]>>>,
  ): void {
    this.handlers.set(name, handler as Handler);
  }

  emit<K extends EventName<Mine>>(name: K, payload: Mine['events'][K]): void {
    this.post({ k: 'event', name, payload });
  }

  on<K extends EventName<Theirs>>(name: K, listener: (payload: Theirs['events'][K]) => void): void {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), listener as (payload: never) => void]);
  }

  /** The other end is gone (or this one closes): the calls waiting fail with `error`, the handlers running are aborted. */
  lost(error: Error): void {
    this.lostWith ??= error;
    for (const [id, { reject, done }] of this.waiting) {
      this.waiting.delete(id);
      done();
      reject(this.lostWith);
    }
    for (const controller of this.running.values()) controller.abort(this.lostWith);
  }

  /** Lets the other end go: a worker's end closed, its thread or process may end. */
  close(): void {
    this.port.close?.();
  }

  private post(message: Wire, transfer?: readonly ArrayBuffer[]): void {
    if (this.queue && message.k !== 'hello') this.queue.push([message, transfer]);
    else if (!this.lostWith) this.port.send(message, transfer);
  }

  private receive(message: Wire): void {
    if (message.k === 'hello') {
      const queued = this.queue ?? [];
      this.queue = null;
      for (const [each, transfer] of queued) this.post(each, transfer);
    } else if (message.k === 'call') this.answer(message);
    else if (message.k === 'cancel') this.running.get(message.id)?.abort();
    else if (message.k === 'event')
      for (const listener of this.listeners.get(message.name) ?? []) listener(message.payload as never);
    else {
      const waiting = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      waiting?.done();
      if (message.k === 'reply') waiting?.resolve(message.value);
      else waiting?.reject(rebuiltError(message.error, this.errors));
    }
  }

  private answer({ id, name, arg, signal }: Extract<Wire, { k: 'call' }>): void {
    const controller = signal ? new AbortController() : undefined;
    if (controller) this.running.set(id, controller);
    const settle = (message: Wire, transfer?: readonly ArrayBuffer[]) => {
      this.running.delete(id);
      this.post(message, transfer);
    };
    const fail = (error: unknown) => settle({ k: 'throw', id, error: errorData(error) });
    const reply = (value: unknown) =>
      value instanceof Transferred
        ? settle({ k: 'reply', id, value: value.value }, value.buffers)
        : settle({ k: 'reply', id, value });
    try {
      const handler = this.handlers.get(name);
      if (!handler) throw new Error(`nothing answers the call ${name}`);
      const result = handler(arg, controller?.signal ?? NEVER);
      if (result instanceof Promise) result.then(reply, fail);
      else reply(result);
    } catch (error) {
      fail(error);
    }
  }
}
