// Whether a streamed body is being read by Deno's own server (Deno.serve, `deno serve`), asked in
// the body's pull (http/handed-parts.ts). Deno's server reads a Response's stream in
// `readableStreamReadFn` (ext/web/06_streams.js, Deno 2.x), which hands each part it reads to Rust
// (op_readable_stream_resource_write_sync, or _write_buf where the channel is full) before it reads
// the next: Rust keeps its own reference to the part's bytes until they are written, and
// JavaScript keeps none. A pull made as it reads the body itself has, in Deno's own code, the
// read of the body (readableStreamDefaultReaderRead) called right from that function. A body read
// by anything else is not recognised, its parts left as they are: a tee (`response.clone()`,
// whose other branch keeps the parts, though its first branch be read by Deno's server: the
// body's read is then called from the tee), a pipe, a Response read whole in JavaScript, or a
// Deno that names them otherwise.

const BODY_READ = /^\s*at readableStreamDefaultReaderRead \(ext:deno_web\//;
const DENO_SERVER_READ = /^\s*at readableStreamReadFn \(ext:deno_web\//;

export function readByDenoServer(): boolean {
  const limit = Error.stackTraceLimit;
  // The read is 6-7 calls below a pull: room for a bundler's or a runtime's few more.
  Error.stackTraceLimit = 24;
  try {
    const frames = (new Error().stack ?? '').split('\n');
    // The body's own read (the first on the stack), called by Deno's server.
    const read = frames.findIndex((frame) => BODY_READ.test(frame));
    return read > 0 && DENO_SERVER_READ.test(frames[read + 1] ?? '');
  } finally {
    Error.stackTraceLimit = limit;
  }
}
