// Whether a streamed body is being read by Deno's own server (Deno.serve, `deno serve`), asked in
// the body's pull (http/handed-parts.ts). Deno's server reads a Response's stream in
// `readableStreamReadFn` (ext/web/06_streams.js, Deno 2.x), which hands each part it reads to Rust
// (op_readable_stream_resource_write_sync, or _write_buf where the channel is full) before it reads
// the next: Rust keeps its own reference to the part's bytes until they are written, and
// JavaScript keeps none. A pull made while it reads has that frame, in Deno's own code, on its
// stack. Any other reader (a tee, a Response read whole in JavaScript, a wrapper), or a Deno that
// names it otherwise, is not recognised: its parts are left as they are.

const DENO_SERVER_READ = /\breadableStreamReadFn \(ext:deno_web\//;

export function readByDenoServer(): boolean {
  const limit = Error.stackTraceLimit;
  // The frame is 7-8 calls below a pull: room for a bundler's or a runtime's few more.
  Error.stackTraceLimit = 24;
  try {
    return DENO_SERVER_READ.test(new Error().stack ?? '');
  } finally {
    Error.stackTraceLimit = limit;
  }
}
