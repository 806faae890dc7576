import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ROUTES } from '../core/route-table.js';
import { CaptureResponse } from './sirv-response.js';

type FileHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** A file as sirv answers it (headers, bytes), kept to be sent again from memory. */
export interface CachedFile {
  readonly headers: OutgoingHttpHeaders;
  readonly etag: string | undefined;
  readonly body: Buffer;
  /** The same headers, Content-Length the body's, as the flat [name, value, ...] list writeHead takes: made once, sent as is. */
  readonly head: readonly string[];
}

/** A site file's answer; or `large`: sirv must stream it; or `absent`: missing or unreadable. */
export type FileLookup = CachedFile | 'large' | 'absent';

const MAX_ENTRY_BYTES = 1024 * 1024;

/**
 * sirv serves a file's `.br` sibling when Accept-Encoding matches /(br|brotli)/i, else its `.gz`
 * one when it includes `gzip`, falling back to the next when a sibling is missing: what it sends
 * depends on these two tests only. Their four outcomes, with an Accept-Encoding for each.
 */
const ACCEPTED = ['', 'gzip', 'br', 'br, gzip'] as const;

export function acceptedEncodings(acceptEncoding: string | undefined): 0 | 1 | 2 | 3 {
  const value = acceptEncoding ?? '';
  return ((/(br|brotli)/i.test(value) ? 2 : 0) + (value.includes('gzip') ? 1 : 0)) as 0 | 1 | 2 | 3;
}

/**
 * Remembers sirv's answers: the first request of a file (per accepted encodings) is answered by
 * sirv and captured, later ones are sent from memory with the same headers, so hot pages cost no
 * disk I/O. Bounded by bytes (least recently used out); files over 1 MiB are left to sirv;
 * missing or unreadable files are not remembered (a later request looks again).
 * Keys are one digit (the accepted encodings) followed by the file: injective.
 */
export class FileCache {
  private readonly entries = new Map<string, CachedFile>();
  private readonly loading = new Map<string, Promise<FileLookup>>();
  private readonly large = new Set<string>();
  private bytes = 0;

  constructor(
    private readonly files: FileHandler,
    /** Headers every answer carries, merged once into each entry's. */
    private readonly baseHeaders: OutgoingHttpHeaders = {},
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  /** What the cache has for a site file, as sirv would answer it to this Accept-Encoding. */
  get(file: string, acceptEncoding: string | undefined): FileLookup | Promise<FileLookup> {
    const accepted = acceptedEncodings(acceptEncoding);
    const key = `${accepted}${file}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    if (this.large.has(key)) return 'large';
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.capture(file, ACCEPTED[accepted]).then((found) => {
        this.loading.delete(key);
        if (found === 'large') this.large.add(key);
        else if (found !== 'absent') this.remember(key, found);
        return found;
      });
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** Drops every file kept (and which are too large): the next request of each is sirv's again. */
  forget(): void {
    this.entries.clear();
    this.large.clear();
    this.bytes = 0;
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

  private capture(file: string, acceptEncoding: string): Promise<FileLookup> {
    return new Promise((resolve, reject) => {
      const req = {
        url: `/${file}`,
        method: 'GET',
        headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {},
      };
      const res = new CaptureResponse(MAX_ENTRY_BYTES);
      res.on('error', reject);
      void res.outcome.then((outcome) => {
        if (outcome === 'unreadable') return resolve('absent');
        if (outcome === 'large' || res.statusCode !== 200) return resolve('large');
        const base = new Set(Object.keys(this.baseHeaders).map((name) => name.toLowerCase()));
        const own = Object.entries(res.headers()).filter(([name]) => !base.has(name.toLowerCase()));
        const etag = own.find(([name]) => name.toLowerCase() === ETAG)?.[1] as string | undefined;
        const headers = { ...this.baseHeaders, ...Object.fromEntries(own) };
        const body = res.body();
        resolve({ headers, etag, body, head: headList(headers, body.length) });
      });
      this.files(req as unknown as IncomingMessage, res as unknown as ServerResponse, () => resolve('absent'));
    });
  }
}

const CONTENT_LENGTH = ROUTES.header.contentLength.toLowerCase();
const ETAG = ROUTES.header.etag.toLowerCase();

/** `headers` as a flat list, with Content-Length `length` last (sirv's own left out). */
function headList(headers: OutgoingHttpHeaders, length: number): string[] {
  const list: string[] = [];
  for (const name in headers) if (name.toLowerCase() !== CONTENT_LENGTH) list.push(name, String(headers[name]));
  list.push(ROUTES.header.contentLength, String(length));
  return list;
}
