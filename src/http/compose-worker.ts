import type { NameField } from '../core/fields.js';
import { Orders, type OrderSource } from '../core/orders.js';
import { Transferred } from '../proc/channel.js';
import { parentChannel } from '../proc/workers.js';
import type { ComposeProtocol } from './compose-thread.js';

// The thread a server composes multi-field orders in (compose-thread.ts), started at the lowest
// priority (startThread's `lowest`): the threads answering requests keep their CPU. The ranks it
// reads are shared, not copied.

const parent = parentChannel<ComposeProtocol>();
parent.handle('compose', ({ terms, count, ranks, last }) => {
  const source: OrderSource = {
    count,
    distinct: (field: NameField) => ranks[field]!.distinct,
    ranks: (field: NameField) => ranks[field]!,
    single: () => last,
  };
  const order = new Orders(source, 0).order(terms);
  return order.buffer instanceof ArrayBuffer ? new Transferred(order, [order.buffer]) : order;
});
