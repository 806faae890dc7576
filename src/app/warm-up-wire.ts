import type { Socket } from 'node:net';
import type { Silent } from '../proc/channel.js';

// What serve's warm-up (warm-up.ts) and its client thread (warm-up-client.ts) share: the requests,
// the thread's call, and how the client reads an answer.

/** One request of the warm-up. */
export interface WarmUpRequest {
  readonly method: 'GET' | 'HEAD';
  readonly target: string;
  /** Header lines besides Host, each ending in CRLF. */
  readonly headers: string;
  /** Sent with If-None-Match, naming the ETag its target was last answered with (if any). */
  readonly conditional: boolean;
}

/** The thread's one call: `requests` asked of the listener on loopback `port`, `connections` at once. */
export interface WarmUpProtocol {
  readonly parent: Silent;
  readonly worker: {
    readonly calls: { ask(work: { port: number; requests: WarmUpRequest[]; connections: number }): void };
    readonly events: Record<never, never>;
  };
}

/**
 * The answers a connection reads, one at a time, each once whole: by its Content-Length, or its
 * chunks up to the last; none after the head of a HEAD's answer or of a 1xx, 204 or 304. A raw
 * socket, not node:http's client: the thread loads and runs less.
 */
export class Answers {
  private text = '';
  private waiting: (() => void) | undefined;
  private ended = false;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.text += chunk.toString('latin1');
      this.waiting?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on('error', () => {});
  }

  /** The head of the next answer (to a HEAD if `head`), once it is whole; throws if the connection closed first. */
  async next(head: boolean): Promise<string> {
    for (;;) {
      const end = answerEnd(this.text, head);
      if (end >= 0) {
        const answer = this.text.slice(0, this.text.indexOf('\r\n\r\n'));
        this.text = this.text.slice(end);
        return answer;
      }
      if (this.ended) throw new Error('the warm-up connection closed');
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }
}

/** Where the first answer in `text` (to a HEAD if `head`) ends, or -1 while it is not whole. */
export function answerEnd(text: string, head = false): number {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return -1;
  const status = Number(text.slice(9, 12));
  if (head || status < 200 || status === 204 || status === 304) return headEnd + 4;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headEnd))?.[1];
  if (length !== undefined) return headEnd + 4 + Number(length) <= text.length ? headEnd + 4 + Number(length) : -1;
  for (let at = headEnd + 4; ; ) {
    const line = text.indexOf('\r\n', at);
    if (line < 0) return -1;
    const size = Number.parseInt(text.slice(at, line), 16);
    if (!(size >= 0)) return text.length; // not an answer of ours: the rest dropped
    // The last chunk (size 0) is followed by an empty line (no trailers are sent).
    at = line + 2 + size + 2;
    if (at > text.length) return -1;
    if (size === 0) return at;
  }
}
