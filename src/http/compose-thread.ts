import type { NameField } from '../core/fields.js';
import type { Ordering } from '../core/ordering.js';
import type { Composer } from '../core/orders.js';
import type { Ranks } from '../core/rank-order.js';
import type { Silent } from '../proc/channel.js';
import { startThread, type WorkerChannel } from '../proc/workers.js';

/** The composing thread's one call: a multi-field order from its terms' ranks and the last term's order. */
export interface ComposeProtocol {
  readonly parent: Silent;
  readonly worker: {
    readonly calls: {
      compose(work: {
        terms: Ordering;
        count: number;
        ranks: Partial<Record<NameField, Ranks>>;
        last: Uint32Array;
      }): Uint32Array;
    };
    readonly events: Record<never, never>;
  };
}

let thread: WorkerChannel<ComposeProtocol> | undefined;

/**
 * A Composer (core/orders.ts) that composes in one thread per process, started by startComposing()
 * or on first use (it does not keep the process alive; one that dies is started again on the next
 * use). Only a source whose ranks and orders lie in shared memory (site-data.ts) is composed there:
 * sending it costs nothing; any other is refused, and so composed in steps by the caller.
 */
export const composeInThread: Composer = async (terms, source) => {
  const last = source.single(terms.slice(-1));
  const ranks: Partial<Record<NameField, Ranks>> = {};
  for (const { field } of terms) ranks[field] = source.ranks(field);
  const views = [last, ...Object.values(ranks).map((r) => r.ranks)];
  if (!views.every((view) => view.buffer instanceof SharedArrayBuffer))
    throw new Error('composed in a thread only from shared memory');
  return startComposing().call('compose', { terms, count: source.count, ranks, last });
};

/**
 * Starts the composing thread now if it is not running (a server, once its site is loaded): the
 * first request that composes then does not wait for the thread to start and load its modules,
 * which it does at the lowest priority.
 */
export function startComposing(): WorkerChannel<ComposeProtocol> {
  return (thread ??= started());
}

function started(): WorkerChannel<ComposeProtocol> {
  const channel = startThread<ComposeProtocol>('http/compose-worker', { name: 'the composing thread', lowest: true });
  channel.worker.thread!.unref();
  void channel.ended.then(() => {
    if (thread === channel) thread = undefined;
  });
  return channel;
}
