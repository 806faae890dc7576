import { type IncomingMessage, ServerResponse } from 'node:http';

// One line per request, written once its answer is done: the Common Log Format (client, time,
// request line, status, size) and the milliseconds it took.
// The target is the client's: bytes that could forge a line in a log are escaped, and it is cut.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const MAX_TARGET = 200;
const PLAIN = /^[\x21\x23-\x5b\x5d-\x7e]*$/;

/** The request target as a log shows it: printable ASCII but `"` and `\`, other bytes as \xNN, at most 200 characters. */
export function loggedTarget(target: string): string {
  if (target.length <= MAX_TARGET && PLAIN.test(target)) return target; // most requests: nothing to escape or cut
  // Node reads the request line as Latin-1: each character up to U+00FF is the byte sent.
  // Quotes and backslashes too: the Common Log Format quotes the request line.
  const safe = target.replace(/[^\x21\x23-\x5b\x5d-\x7e]/gu, (c) =>
    [...Buffer.from(c, c.length === 1 && c.charCodeAt(0) <= 0xff ? 'latin1' : 'utf8')]
      .map((b) => `\\x${b.toString(16).padStart(2, '0')}`)
      .join(''),
  );
  return safe.length > MAX_TARGET ? `${safe.slice(0, MAX_TARGET - 3)}...` : safe;
}

/** What the log says of one answer. */
export interface LoggedRequest {
  readonly client: string | undefined;
  /** When the request came (ms since the epoch). */
  readonly time: number;
  readonly method: string;
  readonly target: string;
  readonly protocol: string;
  readonly status: number;
  /** Body bytes sent (CLF's size: `-` for none). */
  readonly bytes: number;
  readonly ms: number;
  /** The answer was sent whole (false: the client left first, said `closed`). */
  readonly finished: boolean;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The last second clfTime() wrote, and its text: a busy server logs many requests a second. */
let clfSecond = Number.NaN;
let clfText = '';

/** CLF's time, in UTC: `10/Oct/2000:13:55:36 +0000`. */
export function clfTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second === clfSecond) return clfText;
  clfSecond = second;
  clfText = clfTimeOf(ms);
  return clfText;
}

function clfTimeOf(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

/**
 * The log line of one answer, in the Common Log Format (as Apache's `common` and nginx's default
 * write it) followed by the milliseconds it took, and `closed` when the client left first:
 * `127.0.0.1 - - [26/Nov/2026:10:36:15 +0000] "GET /cities/?page=2 HTTP/1.1" 200 5123 1.3ms`.
 */
export function requestLine(r: LoggedRequest): string {
  const ms = r.ms < 10 ? r.ms.toFixed(1) : String(Math.round(r.ms));
  const request = `${loggedTarget(r.method)} ${loggedTarget(r.target)} HTTP/${loggedTarget(r.protocol)}`;
  return `${r.client || '-'} - - [${clfTime(r.time)}] "${request}" ${r.status} ${r.bytes || '-'} ${ms}ms${r.finished ? '' : ' closed'}`;
}

/**
 * node:http's response with what its log line needs, kept on itself rather than in closures made
 * for each request: when the request came, and the body bytes given to `write` and `end`.
 */
export class LoggedResponse extends ServerResponse {
  readonly started = performance.now();
  readonly time = Date.now();
  private bodyBytes = 0;

  /** Body bytes sent (none for HEAD: Node sends no body). */
  get sentBytes(): number {
    return this.req.method === 'HEAD' ? 0 : this.bodyBytes;
  }

  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    this.count(chunk, encoding);
    return (super.write as (...args: unknown[]) => boolean)(chunk, encoding, callback);
  }

  override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
    if (typeof chunk !== 'function') this.count(chunk, encoding);
    return (super.end as (...args: unknown[]) => this)(chunk, encoding, callback);
  }

  private count(chunk: unknown, encoding: unknown): void {
    if (typeof chunk === 'string')
      this.bodyBytes += Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    else if (chunk instanceof Uint8Array) this.bodyBytes += chunk.byteLength;
  }
}

/**
 * What a server needs to log a line for each request once its answer ends: `handler` wrapped,
 * and the response class to create the server with (`createServer({ ServerResponse })`).
 */
export function withRequestLog(
  handler: Handler,
  log: (line: string) => void,
): { readonly handler: Handler; readonly ServerResponse: typeof LoggedResponse } {
  // One listener for every response ('close' comes once): nothing is allocated per request but the line.
  function logged(this: LoggedResponse): void {
    log(
      requestLine({
        client: this.req.socket.remoteAddress,
        time: this.time,
        method: this.req.method ?? '',
        target: this.req.url ?? '',
        protocol: this.req.httpVersion,
        status: this.statusCode,
        bytes: this.sentBytes,
        ms: performance.now() - this.started,
        finished: this.writableFinished,
      }),
    );
  }
  return {
    handler: (req, res) => {
      res.on('close', logged);
      handler(req, res);
    },
    ServerResponse: LoggedResponse,
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
