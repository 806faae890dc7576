import type { IncomingMessage } from 'node:http';

export const MAX_BODY_BYTES = 64 * 1024;

export type ParsedBody =
  | { readonly data: unknown; readonly fromForm: boolean }
  | { readonly status: 400 | 413 | 415; readonly detail: string };

/** Reads a request body of at most 64 KiB and parses it as DRF's parsers would (JSON, form, multipart). */
export async function readBody(req: IncomingMessage): Promise<ParsedBody> {
  const tooLarge = { status: 413, detail: `Request body is larger than ${MAX_BODY_BYTES} bytes.` } as const;
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return tooLarge;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return tooLarge;
    chunks.push(chunk);
  }
  return parseBody(Buffer.concat(chunks), req.headers['content-type']);
}

export async function parseBody(body: Buffer, contentType: string | undefined): Promise<ParsedBody> {
  if (!body.length) return { data: {}, fromForm: false };
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    try {
      return { data: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)), fromForm: false };
    } catch (error) {
      return { status: 400, detail: `JSON parse error - ${(error as Error).message}` };
    }
  }
  if (type === 'application/x-www-form-urlencoded' || type === 'multipart/form-data') {
    try {
      const form = await new Response(body, { headers: { 'content-type': contentType! } }).formData();
      const data: Record<string, string> = {};
      for (const [name, value] of form) if (typeof value === 'string') data[name] = value;
      return { data, fromForm: true };
    } catch (error) {
      return { status: 400, detail: `Multipart form parse error - ${(error as Error).message}` };
    }
  }
  return { status: 415, detail: `Unsupported media type "${contentType ?? ''}" in request.` };
}
