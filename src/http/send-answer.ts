import type { ServerResponse } from 'node:http';
import { ROUTES } from '../core/route-table.js';
import { PART_BYTES, type Parts } from '../core/json-text.js';
import { bodyBytes } from '../core/page.js';
import type { HeaderFields } from './route-types.js';
import type { SendGate } from './send-gate.js';
import { endBody, writeBody } from './body-bytes.js';

// How node-handler.ts writes an answer: headers as the flat list writeHead takes, a whole body
// at once, a large one part by part as the client takes it.

/**
 * Header fields as the flat [name, value, ...] list writeHead takes (node then skips its
 * per-header bookkeeping), with a Content-Length when `length` is given. Made for each answer:
 * most header objects are made for one answer (a computed page's ETag, a 304's, a status page's
 * type), and a cache of lists by header object only held those (a WeakMap entry each, which the
 * garbage collector kept and promoted: half of what a never-seen query left in the old space).
 * Answers sent again keep their list (file-cache.ts, answer-cache.ts).
 */
export function headList(headers: HeaderFields, length?: number): string[] {
  const list: string[] = [];
  for (const name in headers) list.push(name, headers[name]!);
  if (length !== undefined) list.push(ROUTES.header.contentLength, String(length));
  return list;
}

export function send(
  res: ServerResponse,
  status: number,
  headers: HeaderFields,
  body?: Uint8Array | Iterable<Uint8Array> | Parts,
  gate?: SendGate,
): void {
  if (Array.isArray(body) && body.length === 1) body = body[0] as Uint8Array;
  if (body === undefined || body instanceof Uint8Array)
    return sendBytes(res, status, headList(headers, body?.length), body, gate);
  // A large page in parts (a few hundred KiB each): measured, then each part produced once the
  // client has taken the previous one, so at most about one part is held; never assembled.
  res.writeHead(status, headList(headers, 'byteLength' in body ? body.byteLength : bodyBytes(body).length));
  if (res.req.method === 'HEAD') return void res.end();
  gate?.hold(res, 2 * PART_BYTES);
  const parts = body[Symbol.iterator]();
  const pump = (): void => {
    try {
      for (let part = parts.next(); !part.done; part = parts.next())
        if (!writeBody(res, part.value)) return void res.once('drain', pump);
      res.end();
    } catch (error) {
      res.destroy(error as Error); // the headers are sent: the connection is the only way to say it
    }
  };
  pump();
}

/**
 * Sends a whole answer. Its bytes count against the gate's budget only when the socket could not
 * take them all at once (a client not reading): node otherwise hands them to the kernel in end().
 */
export function sendBytes(
  res: ServerResponse,
  status: number,
  head: readonly string[],
  body: Uint8Array | undefined,
  gate: SendGate | undefined,
): void {
  res.writeHead(status, head as string[]);
  endBody(res, body);
  if (body && gate && res.socket && res.socket.writableLength > 0 && res.req.method !== 'HEAD')
    gate.hold(res, body.length);
}
