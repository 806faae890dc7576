import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import type { LambdaEvent, LambdaResult } from '../src/platforms/lambda/adapter.js';
import type { AwsLambdaRuntime, LambdaResponseStream } from '../src/platforms/lambda/streaming.js';

// AWS Lambda as the tests run it: function.zip unpacked by Python's zipfile (an independent
// reader), and a function URL in front of a handler, a node:http server making payload-2.0 events
// of its requests, in BUFFERED mode (the result turned into the answer) or RESPONSE_STREAM mode.

export const PYTHON = '/usr/bin/python3';

type Handler = (event: LambdaEvent) => Promise<LambdaResult>;

/** The payload-2.0 event a function URL makes of an HTTP request. */
async function eventOf(req: IncomingMessage): Promise<LambdaEvent> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const target = req.url!;
  const q = target.indexOf('?');
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    headers[name] = name in headers ? `${headers[name]},${req.rawHeaders[i + 1]}` : req.rawHeaders[i + 1]!;
  }
  const body = Buffer.concat(chunks);
  return {
    rawPath: q < 0 ? target : target.slice(0, q),
    rawQueryString: q < 0 ? '' : target.slice(q + 1),
    headers,
    requestContext: { http: { method: req.method! }, domainName: 'abc.lambda-url.us-east-1.on.aws' },
    ...(body.length ? { body: body.toString('base64'), isBase64Encoded: true } : {}),
  };
}

/** A function URL in front of the handler: each request an event, each result an answer. */
export async function functionUrl(handler: Handler): Promise<{ url: string; server: Server; events: number }> {
  const state = { events: 0 };
  const server = createServer((req, res) => {
    void eventOf(req).then(async (event) => {
      state.events++;
      const result = await handler(event);
      const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body);
      res.writeHead(result.statusCode, result.headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    get events() {
      return state.events;
    },
  };
}

/** function.zip as AWS unpacks it (by Python's zipfile, checked): its directory. */
export async function unpack(out: string): Promise<string> {
  const unpacked = join(out, 'unpacked');
  await promisify(execFile)(PYTHON, [
    '-c',
    'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; z.extractall(sys.argv[2])',
    join(out, 'function.zip'),
    unpacked,
  ]);
  return unpacked;
}

// RESPONSE_STREAM mode. AWS's runtime is not here: `awslambda` is a STAND-IN, written to the
// contract of the Node.js runtime interface client (streamifyResponse marks the handler, which is
// called with the event and a Writable; HttpResponseStream.from writes the prelude, the JSON of
// status and headers then 8 NUL bytes, before the body), and the function URL in front reads that
// prelude into the status line and headers and passes the body on as it is written, with backpressure.

const DELIMITER = Buffer.alloc(8);

/** The stand-in for Lambda's `awslambda` global (see above). */
export const STAND_IN: AwsLambdaRuntime = {
  streamifyResponse: (handler) =>
    Object.assign(handler, { [Symbol.for('aws.lambda.runtime.handler.streaming')]: 'response' }),
  HttpResponseStream: {
    from(stream, prelude) {
      stream.write(Buffer.from(JSON.stringify(prelude)));
      stream.write(DELIMITER);
      return stream;
    },
  },
};

export type StreamHandler = (event: LambdaEvent, stream: LambdaResponseStream) => Promise<void>;

/** The response stream a function URL gives the handler: the prelude becomes `res`'s head, the rest its body. */
function responseStreamFor(res: ServerResponse): Writable {
  let head: Buffer | null = Buffer.alloc(0);
  return new Writable({
    write(chunk: Buffer, _, done) {
      if (head) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf(DELIMITER);
        if (end < 0) return done();
        const { statusCode, headers } = JSON.parse(head.subarray(0, end).toString()) as {
          statusCode: number;
          headers: Record<string, string>;
        };
        const rest = head.subarray(end + DELIMITER.length);
        head = null;
        res.writeHead(statusCode, headers);
        chunk = rest;
      }
      if (res.req.method === 'HEAD' || chunk.length === 0 || res.write(chunk)) return done();
      res.once('drain', () => done());
    },
    final(done) {
      res.end();
      done();
    },
  });
}

export async function streamingFunctionUrl(handler: StreamHandler): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const target = req.url!;
    const q = target.indexOf('?');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const event: LambdaEvent = {
      rawPath: q < 0 ? target : target.slice(0, q),
      rawQueryString: q < 0 ? '' : target.slice(q + 1),
      headers,
      requestContext: { http: { method: req.method! }, domainName: 'abc.lambda-url.us-east-1.on.aws' },
    };
    handler(event, responseStreamFor(res) as unknown as LambdaResponseStream).catch((error: unknown) =>
      res.destroy(error as Error),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
