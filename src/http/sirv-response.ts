import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Writable, type Readable } from 'node:stream';
import { ROUTES } from '../core/route-table.js';
import { writeBody } from './body-bytes.js';

const CACHE_CONTROL = ROUTES.header.cacheControl.toLowerCase();

// What sirv writes its answer into instead of the client's response: status and headers are
// recorded, the file's bytes are collected (CaptureResponse) or passed on with backpressure
// (RelayResponse). sirv pipes a read stream into its response without an error listener, so a
// file that cannot be read (a socket, EACCES, EIO) would throw from the stream and stop the
// process: here the error is caught and reported as `unreadable`, before any byte was sent.

type HeaderValue = string | number | string[];

/** Just enough of a ServerResponse for sirv. */
abstract class SirvResponse extends Writable {
  statusCode = 200;
  /** By lower-case name: the name as last given, and the value. */
  private readonly fields = new Map<string, [string, HeaderValue]>();
  protected source: Readable | undefined;

  constructor() {
    super();
    this.on('pipe', (source: Readable) => {
      this.source = source;
      source.once('error', (error) => this.unreadable(error));
    });
  }

  setHeader(name: string, value: HeaderValue): this {
    this.fields.set(name.toLowerCase(), [name, value]);
    return this;
  }
  getHeader(name: string): HeaderValue | undefined {
    return this.fields.get(name.toLowerCase())?.[1];
  }
  writeHead(status: number, headers: OutgoingHttpHeaders = {}): this {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) this.setHeader(name, value);
    return this;
  }

  /**
   * The recorded headers, without Cache-Control: sirv's dev mode (see site-state.ts) adds
   * `no-cache`, which the reference never sends.
   */
  protected recorded(): [string, HeaderValue][] {
    return [...this.fields].filter(([key]) => key !== CACHE_CONTROL).map(([, field]) => field);
  }

  protected abstract unreadable(error: Error): void;
}

/** Collects sirv's answer (up to `limit` bytes of body) to be kept and sent again from memory. */
export class CaptureResponse extends SirvResponse {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settle!: (outcome: 'complete' | 'large' | 'unreadable') => void;
  /** How the capture ended: the whole body, a body over the limit (no longer read), or a file that cannot be read. */
  readonly outcome = new Promise<'complete' | 'large' | 'unreadable'>((resolve) => (this.settle = resolve));

  constructor(private readonly limit: number) {
    super();
    this.once('finish', () => this.settle('complete'));
  }

  override _write(chunk: Buffer, _: BufferEncoding, done: () => void): void {
    this.size += chunk.length;
    if (this.size <= this.limit) this.chunks.push(chunk);
    else {
      this.source?.destroy();
      this.settle('large');
    }
    done();
  }

  headers(): OutgoingHttpHeaders {
    return Object.fromEntries(this.recorded());
  }

  body(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }

  protected unreadable(): void {
    this.settle('unreadable');
  }
}

/**
 * Passes sirv's answer on to `res`, headers first when the first byte (or the end) comes, each
 * chunk once `res` has taken the previous one. A file that cannot be read is left to
 * `onUnreadable`, with `res` untouched. A HEAD answer stops reading the file after its headers.
 */
export class RelayResponse extends SirvResponse {
  constructor(
    private readonly res: ServerResponse,
    private readonly onUnreadable: () => void,
  ) {
    super();
    res.once('close', () => {
      if (!res.writableFinished) this.source?.destroy();
    });
  }

  override _write(chunk: Buffer, _: BufferEncoding, done: (error?: Error) => void): void {
    this.start();
    if (this.res.req.method === 'HEAD') {
      if (!this.res.writableEnded) this.res.end();
      this.source?.destroy();
      return done();
    }
    if (writeBody(this.res, chunk)) return done();
    this.res.once('drain', () => done());
  }

  override _final(done: () => void): void {
    this.start();
    this.res.end();
    done();
  }

  private start(): void {
    if (this.res.headersSent) return;
    for (const [name, value] of this.recorded()) this.res.setHeader(name, value);
    this.res.writeHead(this.statusCode);
  }

  protected unreadable(error: Error): void {
    if (this.res.headersSent) this.res.destroy(error);
    else this.onUnreadable();
    this.destroy();
  }
}
