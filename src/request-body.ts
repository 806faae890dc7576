import type { IncomingMessage } from 'node:http';

export const MAX_BODY_BYTES = 64 * 1024;

export type ParsedBody =
  | { readonly data: unknown; readonly fromForm: boolean }
  | { readonly status: 400 | 408 | 413 | 415; readonly detail: string };

type Failure = Extract<ParsedBody, { status: number }>;

/**
 * Reads a request body of at most 64 KiB and parses it as DRF's parsers would (JSON, form,
 * multipart). A body that pauses longer than `timeout` ms is answered 408, so a client that
 * stops sending cannot keep its request (and the writer's attention) forever.
 */
export async function readBody(req: IncomingMessage, timeout: number): Promise<ParsedBody> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return tooLarge();
  const body = await collect(req, timeout);
  return Buffer.isBuffer(body) ? parseBody(body, req.headers['content-type']) : body;
}

function tooLarge(): Failure {
  return { status: 413, detail: `Request body is larger than ${MAX_BODY_BYTES} bytes.` };
}

function collect(req: IncomingMessage, timeout: number): Promise<Buffer | Failure> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: Buffer | Failure) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError);
      if (!Buffer.isBuffer(result)) req.pause(); // answered (connection then closed); the rest is not read
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return finish(tooLarge());
      chunks.push(chunk);
      timer.refresh();
    };
    const onEnd = () => finish(Buffer.concat(chunks, size));
    // The client went away or sent a malformed body: no one will read the answer.
    const onError = () => finish({ status: 400, detail: 'The request body was not received completely.' });
    const timer = setTimeout(() => finish({ status: 408, detail: `Request body timeout: no data for ${timeout} ms.` }), timeout);
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

export async function parseBody(body: Buffer, contentType: string | undefined): Promise<ParsedBody> {
  if (!body.length) return { data: {}, fromForm: false };
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    try {
      return { data: JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body)), fromForm: false };
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
