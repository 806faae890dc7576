import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { bodyBytesOf } from './body-bytes.js';
import { LogLines } from './log-line.js';

// One line per request (log-line.ts says what it holds), written once its answer is done, and
// held to be written with others, as nginx's buffered access_log.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * `handler`, with a line logged for each request once its answer is done. Most answers (a file
 * from memory, a cached or quickly computed page) are ended within the handler's call and handed
 * to the kernel whole: their line is written at once, with no listener and no response subclass
 * (those cost about 7 % of a precomputed page's throughput, issue #26). An answer still under
 * way when the handler returns (a file streamed, a page computed in steps, a client not reading)
 * is logged when its response closes, `closed` if the client left before its end (or before it began).
 */
export function withRequestLog(handler: Handler, log: LogBuffer): Handler {
  const clock = new WallClock();
  return (req, res) => {
    const started = performance.now();
    const target = req.url ?? ''; // the client's: sending a site file rewrites req.url
    handler(req, res);
    if (res.writableFinished) return logged(log, req, res, clock.wall(started), started, target, true);
    const time = clock.wall(started); // now, while its second is likely the one read last
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      logged(log, req, res, time, started, target, res.writableFinished);
    };
    res.on('close', end);
    // A response queued behind another on its connection (no socket yet) never closes if the connection closes
    // first: node tells its request only. Logged then, `closed` (pipelined requests a client left were never logged).
    req.on('close', () => {
      if (!res.socket && req.socket.destroyed) end();
    });
  };
}

const CLIENT = Symbol('client address');

function logged(
  log: LogBuffer,
  req: IncomingMessage,
  res: ServerResponse,
  time: number,
  started: number,
  target: string,
  finished: boolean,
): void {
  const method = req.method ?? '';
  // The client's address, kept on its connection (node asks it through a few getters each time).
  const socket = req.socket as IncomingMessage['socket'] & { [CLIENT]?: string | undefined };
  log.append(
    (socket[CLIENT] ??= socket.remoteAddress),
    time,
    method,
    target,
    req.httpVersion,
    res.statusCode,
    method === 'HEAD' ? 0 : bodyBytesOf(res), // node sends no body
    performance.now() - started,
    finished,
  );
}

/**
 * The wall-clock time of a performance.now() reading, from a Date.now() read about once a second
 * (a request reads the monotonic clock twice already, for its duration; on a virtual machine a
 * clock read can cost 100 ns). The second it gives is Date.now()'s but for the clocks' drift over
 * that second (microseconds) and within the millisecond before a second's end, where Date.now()'s
 * truncation leaves the second unsure and the clock is read again.
 */
export class WallClock {
  private offset = 0;
  /** The monotonic times within which the second of the last reading is sure. */
  private from = Number.POSITIVE_INFINITY;
  private until = Number.NEGATIVE_INFINITY;

  /** Milliseconds since the epoch at `monotonic` (a performance.now() reading). */
  wall(monotonic: number): number {
    if (monotonic < this.from || monotonic >= this.until) {
      const wall = Date.now();
      const now = performance.now();
      this.offset = wall - now;
      this.from = now - (wall % 1000);
      this.until = this.from + 999;
    }
    return monotonic + this.offset;
  }
}

/** Bytes of log lines held before they are written (nginx's `access_log ... buffer=` is often 32k-64k). */
export const LOG_BUFFER_BYTES = 64 * 1024;
/** The longest a line is held before it is written (nginx's `flush=`). */
export const LOG_FLUSH_MS = 1000;

/**
 * Log lines written together, as nginx's buffered access_log: once `limit` bytes are held,
 * `flushMs` after the first line held, and on flush() (a server that closes). `write` gets the
 * lines joined by newlines, without a last one: what a line-writing log
 * (`stdout.write(`${line}\n`)`) takes. A write per request cost a third of the throughput
 * (issue #26); one per 64 KiB costs little.
 */
export class LogBuffer extends LogLines {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly write: (text: string) => void,
    private readonly limit = LOG_BUFFER_BYTES,
    private readonly flushMs = LOG_FLUSH_MS,
  ) {
    super(limit + 4096); // room for the line that crosses the limit, most often
  }

  protected override appended(): void {
    if (this.length >= this.limit) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs).unref();
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.length) this.write(this.take());
  }
}

/** Bytes of log a destination may hold unwritten (a pipe read slowly or not at all) before batches are dropped. */
export const LOG_PENDING_BYTES = 1024 * 1024;

/**
 * LogBuffer's `write` onto a stream (stdout): each batch written with its last newline, as long
 * as the stream keeps up. A pipe nobody reads takes 64 KiB, then node holds every further write
 * in memory (node 20 on Linux: its stdout held 13 MB unwritten after 2.5 s of 64 KiB batches). So while
 * `out` holds more than `maxPending` bytes unwritten, batches are dropped (serving never waits
 * for its log) and counted; once it drains, a line says how many were lost. Lines written are
 * never lost at exit: node writes what a stream holds before the process ends.
 */
export function streamLog(out: Writable, maxPending = LOG_PENDING_BYTES): (lines: string) => void {
  let dropped = 0;
  let waiting = false;
  const tell = () => {
    waiting = false;
    if (dropped) out.write(`request log: ${dropped} lines dropped, the log's reader did not keep up\n`);
    dropped = 0;
  };
  return (lines) => {
    if (out.writableLength > maxPending) {
      dropped += lineCount(lines);
      if (!waiting) (waiting = true), out.once('drain', tell);
      return;
    }
    if (dropped) tell();
    out.write(`${lines}\n`);
  };
}

function lineCount(lines: string): number {
  let count = 1;
  for (let at = lines.indexOf('\n'); at >= 0; at = lines.indexOf('\n', at + 1)) count++;
  return count;
}
