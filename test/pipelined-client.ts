import { connect, type Socket } from 'node:net';

// A raw HTTP/1.1 client that sends all its requests at once on one connection (pipelined) and
// reads nothing until told: once the kernel's buffers are full, the server holds the rest of its
// answers (lent-pages tests). Its answers are parsed as they come, in order.

export interface PipelinedRequest {
  readonly method?: 'GET' | 'HEAD';
  /** The target, e.g. `/cities/?page=2`. */
  readonly target: string;
  /** More header lines, each ending in CRLF. */
  readonly headers?: string;
}

export interface PipelinedAnswer {
  readonly status: number;
  readonly head: string;
  readonly body: Buffer;
}

export interface PipelinedClient {
  readonly socket: Socket;
  /** Reads every answer (or all that come before the server closes the connection), then closes. */
  read(): Promise<PipelinedAnswer[]>;
  /** Reads until at least `bytes` bytes came, then resets the connection (RST) mid-answer. */
  readThenReset(bytes: number): Promise<void>;
  /** Resets the connection (RST) at once, unread bytes and all. */
  reset(): void;
}

/**
 * Connects to `port` and sends `requests` (then half-closes its side when `halfClose`), reading nothing yet;
 * then `tail`, bytes after them (a request cut short): read() then reads until the server closes.
 */
export function pipelined(
  port: number,
  requests: readonly PipelinedRequest[],
  halfClose = false,
  tail = '',
): PipelinedClient {
  const socket = connect(port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => {}); // a reset is the point of some cases; read() reports what came
  const text = requests
    .map(({ method = 'GET', target, headers = '' }) => `${method} ${target} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`)
    .join('')
    .concat(tail);
  if (halfClose) socket.end(text);
  else socket.write(text);
  const methods = requests.map((r) => r.method ?? 'GET');
  return {
    socket,
    read: () =>
      new Promise<PipelinedAnswer[]>((resolve) => {
        let received = Buffer.alloc(0);
        const answers: PipelinedAnswer[] = [];
        const done = () => {
          socket.destroy();
          resolve(answers);
        };
        socket.on('data', (chunk: Buffer) => {
          received = Buffer.concat([received, chunk]);
          for (let end = received.indexOf('\r\n\r\n'); end >= 0; end = received.indexOf('\r\n\r\n')) {
            const head = received.subarray(0, end).toString('latin1');
            const status = Number(head.slice(9, 12));
            const bodiless = methods[answers.length] === 'HEAD' || status === 304;
            const length = bodiless ? 0 : Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1]);
            if (received.length < end + 4 + length) break;
            answers.push({ status, head, body: received.subarray(end + 4, end + 4 + length) });
            received = received.subarray(end + 4 + length);
          }
          if (answers.length === requests.length && !tail) done();
        });
        socket.on('close', () => resolve(answers));
        socket.resume();
      }),
    readThenReset: (bytes) =>
      new Promise<void>((resolve) => {
        let got = 0;
        socket.on('data', (chunk: Buffer) => {
          got += chunk.length;
          if (got < bytes || socket.destroyed) return;
          socket.resetAndDestroy();
          resolve();
        });
        socket.on('close', () => resolve());
        socket.resume();
      }),
    reset: () => void socket.resetAndDestroy(),
  };
}
