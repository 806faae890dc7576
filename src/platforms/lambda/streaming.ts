import type { Bytes } from '../../core/bytes.js';
import { CitiesApiError } from '../../core/errors.js';
import { ROUTES } from '../../core/route-table.js';
import type { ReadSiteFile } from '../../site/edge-source.js';
import { createFetchHandler } from '../../http/fetch-handler.js';
import type { EdgeProjectData } from '../../http/edge-site.js';
import { requestOf, targetOf, type LambdaEvent } from './event.js';
import { packageSite, type OpenFile } from './package-reads.js';

// AWS Lambda behind a function URL whose invoke mode is RESPONSE_STREAM: the handler is wrapped by
// `awslambda.streamifyResponse` (a global of Lambda's Node.js runtime) and writes the answer into
// the response stream as the client takes it, its status and headers first in the prelude
// `awslambda.HttpResponseStream.from` writes. A page is streamed from the edge data, never held
// whole, so it is not capped at the 6 MB of a buffered response: AWS documents a streamed
// response's limit as 200 MB (raised from 20 MB in July 2025); a page is capped at a number of cities that fits it
// with room for cities of unusual size, and a larger one is a clear 500, as the buffered handler's.

/** A streamed response's limit, as AWS documents it for Lambda response streaming ("Response streaming for Lambda functions"). */
export const LAMBDA_STREAM_BYTES = 200_000_000;
/** Cities a streamed page may hold: about 77 MB at the ~510 bytes of a city at 140k cities, 2.6× under the limit. */
export const LAMBDA_STREAM_PAGE_CITIES = 150_000;
/** The cap a streamed page meets, and what its clear error says it is. */
export const LAMBDA_STREAM_LIMIT = {
  cities: LAMBDA_STREAM_PAGE_CITIES,
  why: `a streamed AWS Lambda response holds (its limit: ${LAMBDA_STREAM_BYTES / 1_000_000} MB)`,
};

/** The response stream Lambda hands the handler (a Node.js Writable), as far as it is used. */
export interface LambdaResponseStream {
  write(chunk: Bytes): boolean;
  end(): void;
  destroy(error?: Error): void;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  readonly destroyed: boolean;
}

/** The part of Lambda's `awslambda` global used. */
export interface AwsLambdaRuntime {
  streamifyResponse(handler: (event: LambdaEvent, stream: LambdaResponseStream) => Promise<void>): unknown;
  readonly HttpResponseStream: {
    from(
      stream: LambdaResponseStream,
      prelude: { statusCode: number; headers: Record<string, string> },
    ): LambdaResponseStream;
  };
}

/** The handler for a RESPONSE_STREAM function URL (`export const streamingHandler = lambdaStreamingHandler(site, read, open)`). */
export function lambdaStreamingHandler(
  data: EdgeProjectData,
  read: ReadSiteFile,
  open?: OpenFile,
  runtime = (globalThis as { awslambda?: AwsLambdaRuntime }).awslambda,
): unknown {
  if (!runtime)
    return () =>
      Promise.reject(
        new CitiesApiError(
          "streamingHandler needs the awslambda global of AWS Lambda's Node.js runtime: run it there, behind a function URL with InvokeMode RESPONSE_STREAM (else use handler)",
        ),
      );
  // A page assembled whole (format=api, indent) is held in memory: capped as a streamed one.
  const site = packageSite(data, read, open, {
    maxPageCities: LAMBDA_STREAM_PAGE_CITIES,
    streamLimit: LAMBDA_STREAM_LIMIT,
  });
  const openapi = () => read(ROUTES.extras.openapi);
  const handler = createFetchHandler({ site, filePaths: true, openapi });
  return runtime.streamifyResponse(async (event, responseStream) => {
    const response = await handler(requestOf(event), undefined, targetOf(event));
    const headers = Object.fromEntries(response.headers);
    const stream = runtime.HttpResponseStream.from(responseStream, { statusCode: response.status, headers });
    await sendBody(response.body, stream);
  });
}

/** The body written as the stream takes it; a client gone (the stream closed) stops reading the page. */
async function sendBody(body: ReadableStream<Bytes> | null, stream: LambdaResponseStream): Promise<void> {
  if (!body) return stream.end();
  const reader = body.getReader();
  let sent = 0;
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      sent += next.value.length;
      // Lambda would cut the stream there: said in the function's log rather than left to guess.
      if (sent > LAMBDA_STREAM_BYTES)
        throw new CitiesApiError(`the answer exceeds Lambda's ${LAMBDA_STREAM_BYTES}-byte streamed response limit`);
      if (!stream.write(next.value)) await drained(stream);
      if (stream.destroyed) return void (await reader.cancel());
    }
    stream.end();
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    stream.destroy(error as Error);
    throw error;
  }
}

function drained(stream: LambdaResponseStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.once('drain', done);
    stream.once('close', done);
  });
}
