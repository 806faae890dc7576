import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// node:http parses whatever a connection sends as it arrives: a client pipelining requests without
// reading its answers gets an IncomingMessage and a ServerResponse (and the handler's closures) per
// request, queued behind the answer it does not read. node pauses reading on its own only while
// answers queued in its hands hold more than the socket's high-water mark (16 KiB) or the socket
// needs to drain; the send gate (send-gate.ts) computes an answer only once its connection can take
// it, so queued answers hold nothing, and a small answer the kernel refused leaves the socket under
// its mark: node read on, and a flood of `GET /cities/?page=2` grew serve by 300 to 900 MB in 10 s
// at 140k cities, by 5 MB with this cap (scripts/bench-flood.mjs). Here a connection with `cap` requests waiting for their answers stops being read:
// its requests wait in the kernel, whose full receive buffer stops the client (TCP flow control),
// until fewer than `cap` wait. Reading stops after the chunk being parsed (node reads 64 KiB at a
// time and parses all of it: node's own pause does the same), so a connection holds at most `cap`
// requests plus those of one read.
//
// node resumes a socket it paused itself once its answers drain (socketOnDrain in lib/_http_server.js),
// and a socket it has paused stays paused whoever resumes it (its 'resume' listener pauses it again):
// this cap does the same with its own flag, so neither undoes the other's pause.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const QUEUE = Symbol('pipelined requests');

/** A connection's requests given to the handler and not answered yet, and whether its reading is held for them. */
interface Queue {
  waiting: number;
  held: boolean;
  /** Whether its 'resume' listener (which pauses it again while held) is on. */
  watched: boolean;
  /** A request timeout node reported while reading was held, told once the request is still cut `graceMs` after reading resumed. */
  late: (() => void) | undefined;
  timer: NodeJS.Timeout | undefined;
}

type Queued = Socket & { [QUEUE]?: Queue };

/**
 * Each connection read only while fewer than `cap` of its requests wait for their answers. node's
 * request timeouts run while a connection is held: a request the held read cut in two (its rest in
 * the kernel) would time out though the client sent it whole, and a client that waits before reading
 * its answers would lose them all with the 408 that closes its connection. Such a timeout is put off
 * (putOff()) until reading resumes, and is told only if the request is still incomplete `graceMs`
 * later (the headers timeout, afresh).
 */
export class PipelineCap {
  constructor(
    private readonly cap: number,
    private readonly graceMs: number,
  ) {}

  /** `handler`, behind the cap. */
  handler(handler: Handler): Handler {
    const { cap } = this;
    return (req, res) => {
      const socket = req.socket as Queued;
      const queue = (socket[QUEUE] ??= { waiting: 0, held: false, watched: false, late: undefined, timer: undefined });
      if (queue.late && !queue.held) queue.timer = queue.late = void clearTimeout(queue.timer); // the cut request came whole
      if (++queue.waiting >= cap && !queue.held) hold(socket, queue);
      handler(req, res);
      // Most answers are handed to the kernel within the handler's call: no listener for them.
      if (res.writableFinished) this.answered(socket, queue);
      else res.once('close', () => this.answered(socket, queue));
    };
  }

  /** Whether the request timeout node reports for `socket` is put off (its reading is held); `timeout` says it if it still holds later. */
  putOff(socket: Socket, timeout: () => void): boolean {
    const queue = (socket as Queued)[QUEUE];
    if (!queue?.held) return false;
    queue.late = timeout;
    return true;
  }

  private answered(socket: Queued, queue: Queue): void {
    if (--queue.waiting >= this.cap || !queue.held) return;
    queue.held = false;
    if (socket.destroyed) return;
    // node's own pause, if any, stays: its 'resume' listener pauses the socket again, and it resumes it once drained.
    socket.resume();
    const { late } = queue;
    if (late)
      queue.timer = setTimeout(() => {
        queue.timer = queue.late = undefined;
        if (!socket.destroyed) late();
      }, this.graceMs).unref();
  }
}

function hold(socket: Queued, queue: Queue): void {
  queue.held = true;
  if (!queue.watched) {
    queue.watched = true;
    // node resumes a socket it paused once its answers drain, and a request's body read resumes it too.
    socket.on('resume', () => queue.held && socket.pause());
  }
  socket.pause();
}
