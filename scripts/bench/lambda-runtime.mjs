#!/usr/bin/env node
// Run by bench-edge.mjs as `node --expose-gc scripts/bench/lambda-runtime.mjs DIR`: one Lambda
// execution environment, a Node process that loads the function from its unpacked package
// (DIR/index.mjs, as Lambda's Node.js runtime does) and answers one request at a time (the bench
// asks so), as an environment does. A function URL stand-in in front: `/buffered/...` through index.handler
// (BUFFERED mode: payload-2.0 event in, the result's base64 body out), `/stream/...` through
// index.streamingHandler (RESPONSE_STREAM mode: `awslambda` a stand-in whose
// HttpResponseStream.from writes the prelude's status and headers as the response's head and
// hands the handler the response itself, a Writable with backpressure). `/__bench/stats` answers
// the process's CPU time (µs), bytes read (/proc/self/io rchar: files and sockets), and its JS
// heap + external (ArrayBuffers) and RSS, now and at their peak since the last `?reset` (which
// collects garbage first: the baseline), sampled every 2 ms and at the end of each answer.
// A peak counts garbage not collected yet: V8 collects ArrayBuffers (the parts a page is sent in)
// once some tens of MB of them are dead, so a large answer's peak is mostly its garbage.
// Prints `listening PORT` once ready.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir] = process.argv.slice(2);
globalThis.awslambda = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: {
    from(stream, { statusCode, headers }) {
      stream.writeHead(statusCode, headers);
      return stream;
    },
  },
};
const { handler, streamingHandler } = await import(pathToFileURL(join(dir, 'index.mjs')).href);

const memory = () => {
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
};
let peak = memory();
const sample = () => {
  const now = memory();
  peak = { heap: Math.max(peak.heap, now.heap), rss: Math.max(peak.rss, now.rss) };
  return now;
};
setInterval(sample, 2).unref();

const eventOf = (url, method, headers) => {
  const q = url.indexOf('?');
  return {
    rawPath: q < 0 ? url : url.slice(0, q),
    rawQueryString: q < 0 ? '' : url.slice(q + 1),
    headers,
    requestContext: { http: { method }, domainName: 'abc.lambda-url.us-east-1.on.aws' },
  };
};

const server = createServer(async (req, res) => {
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
  if (req.url.startsWith('/__bench/stats')) {
    if (req.url.includes('reset')) {
      // Twice, a moment apart: V8 frees ArrayBuffers' memory on a thread of its own after a GC.
      globalThis.gc?.();
      await new Promise((resolve) => setTimeout(resolve, 50));
      globalThis.gc?.();
      peak = memory();
    }
    const cpu = process.cpuUsage();
    const rchar = Number(/rchar:\s+(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]);
    return res.end(JSON.stringify({ cpu: cpu.user + cpu.system, rchar, now: sample(), peak }));
  }
  try {
    if (req.url.startsWith('/stream/')) {
      await streamingHandler(eventOf(req.url.slice('/stream'.length), req.method, headers), res);
    } else {
      const result = await handler(eventOf(req.url.slice('/buffered'.length), req.method, headers));
      res.writeHead(result.statusCode, result.headers);
      res.end(Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
    }
  } catch (error) {
    // Said: the client sees only its connection closed.
    console.error(`lambda-runtime: ${req.url}: ${error?.stack ?? error}`);
    res.destroy(error);
  }
  sample();
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
