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
/** Servers of this process holding the thread (holdComposing): it runs while there is one. */
let holds = 0;

/**
 * A Composer (core/orders.ts) that composes in one thread per process, while a server holds it
 * (holdComposing: started then, or on first use; it does not keep the process alive; one that
 * dies is started again on the next use). Only a source whose ranks and orders lie in shared
 * memory (site-data.ts) is composed there: sending it costs nothing. Any other, or any while no
 * server holds the thread (a request answered as its server closes), is refused, and so composed
 * in steps by the caller.
 */
export const composeInThread: Composer = async (terms, source) => {
  if (!holds) throw new Error('composed in a thread only while a server holds it');
  const last = source.single(terms.slice(-1));
  const ranks: Partial<Record<NameField, Ranks>> = {};
  for (const { field } of terms) ranks[field] = source.ranks(field);
  const views = [last, ...Object.values(ranks).map((r) => r.ranks)];
  if (!views.every((view) => view.buffer instanceof SharedArrayBuffer))
    throw new Error('composed in a thread only from shared memory');
  return (thread ??= started()).call('compose', { terms, count: source.count, ranks, last });
};

/**
 * Holds the composing thread for a server (LiveSite), starting it now if it is not running: the
 * first request that composes then does not wait for the thread to start and load its modules,
 * which it does at the lowest priority. The returned call lets go (once); the last hold let go
 * ends the thread, resolving once it has ended: a library caller's closed server leaves none.
 */
export function holdComposing(): () => Promise<void> {
  holds++;
  thread ??= started();
  let held = true;
  return async () => {
    if (!held) return;
    held = false;
    if (--holds || !thread) return;
    const ending = thread;
    thread = undefined; // a hold taken while it ends starts another
    await ending.stop();
  };
}

function started(): WorkerChannel<ComposeProtocol> {
  const channel = startThread<ComposeProtocol>('http/compose-worker', { name: 'the composing thread', lowest: true });
  channel.worker.thread!.unref();
  void channel.ended.then(() => {
    if (thread === channel) thread = undefined;
  });
  return channel;
}
