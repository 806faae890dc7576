import type { IncomingMessage } from 'node:http';

/**
 * `req.headers[name]` for a header node joins when repeated (Accept, Accept-Encoding,
 * If-None-Match: values joined with `, `), read from `req.rawHeaders` without making
 * `req.headers`: node builds that object on first use, a store per header a request sends, for
 * the two or three that routing a request reads. `name` in lower case.
 */
export function joinedHeader(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const field = raw[i]!;
    if (field.length !== name.length || (field !== name && field.toLowerCase() !== name)) continue;
    value = value === undefined ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
  }
  return value;
}
