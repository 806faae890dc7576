import type { IncomingMessage, ServerResponse } from 'node:http';

// One line per request, written once its answer is done: method, target, status, milliseconds.
// The target is the client's: bytes that could forge a line in a log are escaped, and it is cut.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const MAX_TARGET = 200;

/** The request target as a log shows it: printable ASCII, other bytes as \xNN, at most 200 characters. */
export function loggedTarget(target: string): string {
  // Node reads the request line as Latin-1: each character up to U+00FF is the byte sent.
  const safe = target.replace(/[^\x21-\x7e]/gu, (c) =>
    [...Buffer.from(c, c.length === 1 && c.charCodeAt(0) <= 0xff ? 'latin1' : 'utf8')]
      .map((b) => `\\x${b.toString(16).padStart(2, '0')}`)
      .join(''),
  );
  return safe.length > MAX_TARGET ? `${safe.slice(0, MAX_TARGET - 3)}...` : safe;
}

/** The log line of one answer: `GET /cities/?page=2 200 1.3ms` (`closed` when the client left first). */
export function requestLine(method: string, target: string, status: number, ms: number, finished: boolean): string {
  return `${loggedTarget(method)} ${loggedTarget(target)} ${status}${finished ? '' : ' closed'} ${ms < 10 ? ms.toFixed(1) : Math.round(ms)}ms`;
}

/** `handler`, with a line logged for each request once its answer ends. */
export function withRequestLog(
  handler: Handler,
  log: (line: string) => void,
  now: () => number = () => performance.now(),
): Handler {
  return (req, res) => {
    const started = now();
    res.once('close', () =>
      log(requestLine(req.method ?? '', req.url ?? '', res.statusCode, now() - started, res.writableFinished)),
    );
    handler(req, res);
  };
}

/** Bytes of log lines held before they are written (nginx's `access_log ... buffer=` is often 32k-64k). */
export const LOG_BUFFER_BYTES = 64 * 1024;
/** The longest a line is held before it is written (nginx's `flush=`). */
export const LOG_FLUSH_MS = 1000;

/**
 * Log lines written together, as nginx's buffered access_log: once `bytes` are held, `flushMs`
 * after the first line held, and on flush() (a server that closes). `write` gets the lines joined
 * by newlines, without a last one: what a line-writing log (`stdout.write(`${line}\n`)`) takes.
 * A write per request cost a third of the throughput (issue #26); one per 64 KiB costs little.
 */
export class LogBuffer {
  private lines: string[] = [];
  private bytes = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly write: (text: string) => void,
    private readonly limit = LOG_BUFFER_BYTES,
    private readonly flushMs = LOG_FLUSH_MS,
  ) {}

  readonly add = (line: string): void => {
    this.lines.push(line);
    this.bytes += line.length + 1;
    if (this.bytes >= this.limit) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs).unref();
  };

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.lines.length) return;
    const text = this.lines.join('\n');
    [this.lines, this.bytes] = [[], 0];
    this.write(text);
  }
}
