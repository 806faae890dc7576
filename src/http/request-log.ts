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
