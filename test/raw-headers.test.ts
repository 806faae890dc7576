import { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { joinedHeader } from '../src/http/raw-headers.js';

// joinedHeader() reads what node's req.headers would hold, without node building that object: the
// oracle is node's own header joining (IncomingMessage's req.headers), on the same raw headers.

/** A request as node's parser leaves it: raw headers, req.headers not made yet. */
function requestWith(raw: string[]): IncomingMessage {
  const req = new IncomingMessage(null as never);
  req.rawHeaders = raw;
  const count = Object.getOwnPropertySymbols(req).find((s) => s.description === 'kHeadersCount')!;
  (req as unknown as Record<symbol, number>)[count] = raw.length;
  return req;
}

/** Whether node has built req.headers (its kHeaders slot). */
function headersBuilt(req: IncomingMessage): boolean {
  const slot = Object.getOwnPropertySymbols(req).find((s) => s.description === 'kHeaders')!;
  return Boolean((req as unknown as Record<symbol, unknown>)[slot]);
}

describe('joinedHeader: what req.headers holds, from rawHeaders', () => {
  it.each([
    ['absent', ['Host', 'x'], 'accept'],
    ['one, as sent', ['Host', 'x', 'Accept', 'application/json'], 'accept'],
    ['any case', ['ACCEPT', 'text/html'], 'accept'],
    ['repeated: joined with ", ", empty values too', ['Accept', 'a', 'accept', 'b', 'Accept', ''], 'accept'],
    ['another header of the same length is not it', ['Origin', 'o', 'Cookie', 'c'], 'accept'],
    ['If-None-Match repeated', ['If-None-Match', '"1"', 'if-none-match', 'W/"2"'], 'if-none-match'],
    ['Accept-Encoding beside Accept', ['Accept', 'a', 'Accept-Encoding', 'gzip, br'], 'accept-encoding'],
    ['a longer name that starts alike', ['Accept-Language', 'fr', 'Accept', 'x'], 'accept'],
  ])('%s', (_, raw, name) => {
    const req = requestWith(raw);
    const value = joinedHeader(req, name);
    expect(headersBuilt(req)).toBe(false);
    expect(value).toBe(req.headers[name]);
    expect(headersBuilt(req)).toBe(true);
  });
});
