import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';

type FileHandler = (req: IncomingMessage, res: ServerResponse, next?: () => void) => void;

/** A file as sirv answers it (headers, bytes), kept to be sent again from memory. */
export interface CachedFile {
  readonly headers: OutgoingHttpHeaders;
  readonly etag: string | undefined;
  readonly body: Buffer;
}

const MAX_ENTRY_BYTES = 1024 * 1024;

/** The precompressed variant sirv picks for an Accept-Encoding header. */
export function variantFor(acceptEncoding: string | undefined): string {
  if (!acceptEncoding) return '';
  if (/(br|brotli)/i.test(acceptEncoding)) return 'br';
  return acceptEncoding.includes('gzip') ? 'gzip' : '';
}

/**
 * Remembers sirv's answers: the first request of a file (per encoding) is answered by sirv
 * and captured, later ones are sent from memory with the same headers, so hot pages cost no
 * disk I/O. Bounded by bytes (least recently used out); files over 1 MiB are left to sirv.
 */
export class FileCache {
  private readonly entries = new Map<string, CachedFile>();
  private readonly loading = new Map<string, Promise<CachedFile | null>>();
  private readonly tooBig = new Set<string>();
  private bytes = 0;

  constructor(
    private readonly files: FileHandler,
    /** Headers every answer carries, merged once into each entry's. */
    private readonly baseHeaders: OutgoingHttpHeaders = {},
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  /** The cached answer for a site file, or null when sirv must send it itself (large or missing). */
  get(file: string, acceptEncoding: string | undefined): CachedFile | null | Promise<CachedFile | null> {
    const key = `${variantFor(acceptEncoding)}:${file}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    if (this.tooBig.has(key)) return null;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.capture(file, acceptEncoding).then((entry) => {
        this.loading.delete(key);
        if (!entry) this.tooBig.add(key);
        else this.remember(key, entry);
        return entry;
      });
      this.loading.set(key, pending);
    }
    return pending;
  }

  private remember(key: string, entry: CachedFile): void {
    this.entries.set(key, entry);
    this.bytes += entry.body.length;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.body.length;
    }
  }

  private capture(file: string, acceptEncoding: string | undefined): Promise<CachedFile | null> {
    return new Promise((resolve, reject) => {
      const req = { url: `/${file}`, method: 'GET', headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} };
      const res = new CaptureResponse();
      res.on('finish', () => resolve(res.result(this.baseHeaders)));
      res.on('error', reject);
      this.files(req as unknown as IncomingMessage, res as unknown as ServerResponse, () => resolve(null));
    });
  }
}

/**
 * Makes sirv's answer on `res` carry no Cache-Control: its dev mode (see site-state.ts) adds
 * `no-cache`, which the reference never sends.
 */
export function withoutCacheControl(res: ServerResponse): ServerResponse {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: OutgoingHttpHeaders) => ServerResponse;
  res.writeHead = ((status: number, headers?: OutgoingHttpHeaders) => {
    if (headers) delete headers['Cache-Control'];
    return writeHead(status, headers);
  }) as ServerResponse['writeHead'];
  return res;
}

/** Just enough of a ServerResponse for sirv to write into. */
class CaptureResponse extends Writable {
  statusCode = 200;
  private readonly headers: OutgoingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;

  setHeader(name: string, value: string | number): this {
    this.headers[name.toLowerCase()] = value;
    return this;
  }
  getHeader(name: string) {
    return this.headers[name.toLowerCase()];
  }
  writeHead(status: number, headers: OutgoingHttpHeaders = {}): this {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) this.setHeader(name, value as string);
    return this;
  }
  override _write(chunk: Buffer, _: BufferEncoding, done: () => void): void {
    this.size += chunk.length;
    if (this.size <= MAX_ENTRY_BYTES) this.chunks.push(chunk);
    done();
  }
  result(base: OutgoingHttpHeaders): CachedFile | null {
    if (this.statusCode !== 200 || this.size > MAX_ENTRY_BYTES) return null;
    const { vary: _vary, 'content-type': _type, 'cache-control': _cache, ...own } = this.headers;
    return { headers: { ...base, ...own }, etag: own.etag as string | undefined, body: Buffer.concat(this.chunks, this.size) };
  }
}
