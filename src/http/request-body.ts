import { ROUTES } from '../core/route-table.js';
import type { IncomingMessage } from 'node:http';
import { parseUrlencoded } from '../post/form-body.js';
import { parseMultipart } from '../post/multipart-body.js';
import { matches, parseMediaType, type MediaType } from '../core/negotiate.js';
import { decodeStream, lookupCodec, PyDecodeError, type Codec } from '../post/python-codecs.js';
import { parsePyJson, PyJsonError } from '../post/python-json.js';

export const MAX_BODY_BYTES = ROUTES.limits.bodyBytes;

export type ParsedBody =
  | { readonly data: unknown; readonly fromForm: boolean }
  | { readonly status: 400 | 408 | 413 | 415; readonly detail: string }
  | { readonly status: 400; readonly djangoPage: 'bad-request' };

type Failure = Extract<ParsedBody, { detail: string }>;

/**
 * Reads a request body of at most 64 KiB and parses it (parseBody). A body that pauses longer than `timeout` ms is answered 408, so a client that
 * stops sending cannot keep its request (and the writer's attention) forever.
 */
export async function readBody(req: IncomingMessage, timeout: number): Promise<ParsedBody> {
  if (Number(req.headers[CONTENT_LENGTH] ?? 0) > MAX_BODY_BYTES) return tooLarge();
  const body = await collect(req, timeout);
  return Buffer.isBuffer(body) ? parseBody(body, req.headers[CONTENT_TYPE] as string | undefined) : body;
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
    const timer = setTimeout(
      () => finish({ status: 408, detail: `Request body timeout: no data for ${timeout} ms.` }),
      timeout,
    );
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/**
 * Parses a body as DRF's parsers do, picked by Content-Type in DRF's order (JSON, form,
 * multipart; `*' matches), decoded with the request's charset, refused with DRF's messages.
 */
export async function parseBody(body: Buffer, contentType: string | undefined): Promise<ParsedBody> {
  if (!body.length) return { data: {}, fromForm: false };
  const raw = contentType ?? '';
  const type = parseMediaType(raw);
  const parser = PARSERS.find(([parserType]) => matches(parserType, type))?.[1];
  if (!parser) return { status: 415, detail: `Unsupported media type "${raw}" in request.` };
  const codec = requestCodec(type);
  if (typeof codec === 'object')
    return { status: 415, detail: `Unsupported charset "${codec.unsupported}" in request: send UTF-8 (or Latin-1).` };
  if (parser === 'json') {
    try {
      return { data: parsePyJson(decodeStream(body, codec)), fromForm: false };
    } catch (error) {
      if (error instanceof PyJsonError || error instanceof PyDecodeError)
        return { status: 400, detail: `JSON parse error - ${error.message}` };
      throw error;
    }
  }
  if (parser === 'form') {
    const data = parseUrlencoded(body, codec);
    return data ? { data, fromForm: true } : TOO_MANY_FIELDS;
  }
  const result = parseMultipart(body, raw, type, codec);
  if ('tooMany' in result) return TOO_MANY_FIELDS;
  if ('error' in result) return { status: 400, detail: `Multipart form parse error - ${result.error}` };
  return { data: result.data, fromForm: true };
}

const CONTENT_LENGTH = ROUTES.header.contentLength.toLowerCase();
const CONTENT_TYPE = ROUTES.header.contentType.toLowerCase();
const PARSERS = (
  [
    [ROUTES.mediaType.json, 'json'],
    [ROUTES.mediaType.form, 'form'],
    [ROUTES.mediaType.multipart, 'multipart'],
  ] as const
).map(([type, name]) => [parseMediaType(type), name] as const);

/**
 * The codec Django decodes the body with: the charset parameter when Python knows it (then,
 * among Python's codecs, we decode UTF-8, Latin-1 and ASCII: `unsupported` for the others,
 * which we cannot tell from names Python does not know), else UTF-8 (DEFAULT_CHARSET).
 */
function requestCodec(type: MediaType): Codec | { readonly unsupported: string } {
  const charset = type.params.get('charset');
  if (charset === undefined) return 'utf-8';
  return lookupCodec(charset) ?? { unsupported: charset };
}
/** Django refuses a body of too many fields or files (SuspiciousOperation) with its HTML 400 page. */
const TOO_MANY_FIELDS = { status: 400, djangoPage: 'bad-request' } as const;
