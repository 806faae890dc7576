import { connect, type Socket } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

/** What came back on a raw connection: the first response (if any), every byte, and how it ended. */
export interface RawExchange {
  /** Status of the first response; null when the server closed without answering. */
  readonly status: number | null;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** Every byte received, all responses included. */
  readonly bytes: Buffer;
  /** The server closed the connection (rather than the exchange timing out). */
  readonly closed: boolean;
  readonly ms: number;
}

export interface RawOptions {
  /** Give up (and close) after this many ms; default 5000. */
  readonly timeout?: number;
  /** After the first `from` bytes (sent at once), the rest in pieces of `bytes`, one every `every` ms (a slow client). */
  readonly drip?: { readonly bytes: number; readonly every: number; readonly from?: number };
  /** Stop dripping after this many bytes and wait (a client that stalls). */
  readonly stallAfter?: number;
}

/**
 * Sends bytes on a fresh TCP connection exactly as given (what node:http's client refuses to
 * send: raw bytes, bad methods, huge targets) and reads until the server closes.
 */
export function rawExchange(url: string, request: string | Buffer, options: RawOptions = {}): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  const data = typeof request === 'string' ? Buffer.from(request, 'latin1') : request;
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let drip: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      clearInterval(drip);
      socket.destroy();
      resolve({
        ...parseResponse(Buffer.concat(chunks)),
        bytes: Buffer.concat(chunks),
        closed,
        ms: Date.now() - started,
      });
    };
    const timer = setTimeout(() => finish(false), options.timeout ?? 5000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined); // a reset after the answer still ends in 'close'
    const end = Math.min(data.length, options.stallAfter ?? data.length);
    if (!options.drip) {
      socket.write(data.subarray(0, end));
      return;
    }
    const { bytes, every, from = 0 } = options.drip;
    let sent = from;
    socket.write(data.subarray(0, from));
    drip = setInterval(() => {
      if (sent >= end || socket.destroyed) return clearInterval(drip);
      socket.write(data.subarray(sent, Math.min(end, sent + bytes)));
      sent += bytes;
    }, every);
  });
}

/** The first final HTTP/1.1 response in bytes: status, lower-cased headers, body (de-chunked). */
export function parseResponse(bytes: Buffer): { status: number | null; headers: Record<string, string>; body: Buffer } {
  while (/^HTTP\/1\.1 1\d\d /.test(bytes.subarray(0, 13).toString('latin1')))
    bytes = bytes.subarray(bytes.indexOf('\r\n\r\n') + 4); // 100 Continue
  const end = bytes.indexOf('\r\n\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(bytes.subarray(0, 20).toString('latin1'));
  if (!status || end < 0) return { status: null, headers: {}, body: Buffer.alloc(0) };
  const headers: Record<string, string> = {};
  for (const line of bytes.subarray(0, end).toString('latin1').split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = bytes.subarray(end + 4);
  if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  else if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  return { status: Number(status[1]), headers, body };
}

function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = bytes.indexOf('\r\n', at);
    const size = eol < 0 ? 0 : parseInt(bytes.subarray(at, eol).toString('latin1'), 16);
    if (!size) return Buffer.concat(parts);
    parts.push(bytes.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** A body as the client would read it: decompressed when it says it is compressed (and can be). */
export function decodedBody(res: { headers: Record<string, string | string[] | undefined>; body: Buffer }): Buffer {
  try {
    if (res.headers['content-encoding'] === 'gzip') return gunzipSync(res.body);
    if (res.headers['content-encoding'] === 'br') return brotliDecompressSync(res.body);
  } catch {
    // truncated (HEAD) or not what it claims: the raw bytes are checked instead
  }
  return res.body;
}

/**
 * Reads `count` consecutive responses (each with a Content-Length) from a connected socket,
 * handing each to `each` as it completes, so that many large answers need not be held at once.
 */
export function readResponses(
  socket: Socket,
  count: number,
  each: (res: { status: number; headers: Record<string, string>; body: Buffer }, index: number) => void,
  timeout = 60_000,
): Promise<number> {
  return new Promise((resolve, reject) => {
    // The bytes not yet handed out, joined only once the response they end is whole: joining them at
    // each chunk copied a 13 MB answer some 200 times (25 of this helper's 26 CPU-s in serve-backpressure).
    const pending: Buffer[] = [];
    let pendingBytes = 0;
    let needed = 0;
    let read = 0;
    const timer = setTimeout(() => done(new Error(`${read} of ${count} responses read before the timeout`)), timeout);
    const done = (error?: Error) => {
      clearTimeout(timer);
      socket.off('data', onData);
      if (error) reject(error);
      else resolve(read);
    };
    const onData = (chunk: Buffer) => {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes < needed) return;
      let buffered = pending.length === 1 ? chunk : Buffer.concat(pending, pendingBytes);
      pending.length = 0;
      needed = 0;
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) break;
        const { status, headers } = parseResponse(buffered.subarray(0, end + 4));
        const length = Number(headers['content-length']);
        if (status === null || !Number.isFinite(length))
          return done(new Error(`response ${read} has no Content-Length`));
        if (buffered.length < end + 4 + length) {
          needed = end + 4 + length;
          break;
        }
        each({ status, headers, body: buffered.subarray(end + 4, end + 4 + length) }, read++);
        buffered = buffered.subarray(end + 4 + length);
        if (read === count) return done();
      }
      pending.push(buffered);
      pendingBytes = buffered.length;
    };
    socket.on('data', onData);
    socket.once('close', () =>
      done(read === count ? undefined : new Error(`the server closed after ${read} of ${count} responses`)),
    );
    socket.resume();
  });
}
