import type { ServerResponse } from 'node:http';

/**
 * Bounds what answers hold in memory. node:http parses pipelined requests as they arrive and
 * queues their responses, each buffering its whole body until the earlier ones are sent: a
 * client sending many requests and reading none would make the server compute and hold every
 * answer. Here an answer is computed only once it can be written at once:
 * - its response is its connection's current one (the earlier answers were handed to the
 *   kernel: node assigns the socket to the next response when the previous one finishes) and
 *   that socket has drained;
 * - across connections, the bytes answers may hold in memory (see hold()) stay under a budget;
 *   answers wait for it in arrival order.
 * A connection whose client takes no byte of an answer for a whole `stallMs` period (checked
 * each period, so after one to two of them) is closed, releasing what its answer holds.
 */
export class SendGate {
  private held = 0;
  private readonly waiting: (() => void)[] = [];
  /** Responses holding bytes → their socket's unsent bytes at the last check (-1: not waiting to drain). */
  private readonly open = new Map<ServerResponse, number>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly stallMs: number,
  ) {}

  /** Runs `answer` for `res` when the conditions above hold (at once in the common case). */
  admit(res: ServerResponse, answer: () => void): void {
    const socket = res.socket;
    if (!socket) return void res.once('socket', () => this.admit(res, answer));
    if (socket.destroyed) return; // the client is gone: nothing to answer
    if (socket.writableNeedDrain) return void socket.once('drain', () => this.admit(res, answer));
    if (this.held >= this.maxBytes) return void this.waiting.push(() => this.admit(res, answer));
    answer();
  }

  /** Counts `bytes` (the most `res` keeps in memory at once) against the budget until `res` closes. */
  hold(res: ServerResponse, bytes: number): void {
    if (bytes <= 0) return;
    this.held += bytes;
    this.open.set(res, -1);
    this.sweeper ??= setInterval(() => this.sweep(), this.stallMs).unref();
    res.once('close', () => {
      this.held -= bytes;
      this.open.delete(res);
      if (!this.open.size) this.sweeper = void clearInterval(this.sweeper);
      while (this.held < this.maxBytes && this.waiting.length) this.waiting.shift()!();
    });
  }

  /** Bytes held now. */
  get heldBytes(): number {
    return this.held;
  }

  private sweep(): void {
    for (const [res, last] of this.open) {
      const socket = res.socket;
      if (!socket?.writableNeedDrain) this.open.set(res, -1);
      else if (last >= 0 && socket.writableLength >= last) socket.destroy();
      else this.open.set(res, socket.writableLength);
    }
  }
}
