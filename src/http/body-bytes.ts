import type { ServerResponse } from 'node:http';

// The body bytes each answer hands to node:http, for the request log's size (request-log.ts):
// node keeps no such count (its socket's counts headers too, and the next answer's). Every body
// src/ writes goes through writeBody() or endBody() (test/request-log.test.ts checks that none
// is written otherwise), so no response needs a subclass overriding write() and end().

const BODY_BYTES = Symbol('body bytes');
type Counted = ServerResponse & { [BODY_BYTES]?: number };

/** `res.write(chunk)`, counted. */
export function writeBody(res: ServerResponse, chunk: Uint8Array): boolean {
  (res as Counted)[BODY_BYTES] = ((res as Counted)[BODY_BYTES] ?? 0) + chunk.length;
  return res.write(chunk);
}

/** `res.end(body)`, counted (`length`: a Uint8Array's `byteLength` in optimized code went through V8's generic load). */
export function endBody(res: ServerResponse, body?: Uint8Array): void {
  if (body) (res as Counted)[BODY_BYTES] = ((res as Counted)[BODY_BYTES] ?? 0) + body.length;
  res.end(body);
}

/** The body bytes given to writeBody() and endBody() for `res` so far. */
export function bodyBytesOf(res: ServerResponse): number {
  return (res as Counted)[BODY_BYTES] ?? 0;
}
