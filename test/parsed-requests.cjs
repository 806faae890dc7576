// Preloaded into a serve process (NODE_OPTIONS=--require) by pipelined-flood.test.ts: through node:http's own
// diagnostics channels (published as it parses a request and as it finishes an answer), the requests each
// connection had parsed and not yet answered. Writes, as they change, `{ parsed, peak, open }` to
// $PARSED_REQUESTS_DIR/<pid>: requests parsed in all, the most one connection had waiting at once, the
// connections open. Each process of `serve --workers N` writes its own file.
const { subscribe } = require('node:diagnostics_channel');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { isMainThread } = require('node:worker_threads');

const dir = process.env.PARSED_REQUESTS_DIR;
if (dir && isMainThread) {
  const waiting = new Map();
  let parsed = 0;
  let peak = 0;
  let changed = true;
  subscribe('http.server.request.start', ({ socket }) => {
    if (!waiting.has(socket))
      socket.once('close', () => {
        waiting.delete(socket);
        changed = true;
      });
    const now = (waiting.get(socket) ?? 0) + 1;
    waiting.set(socket, now);
    parsed++;
    peak = Math.max(peak, now);
    changed = true;
  });
  subscribe('http.server.response.finish', ({ socket }) => {
    if (waiting.has(socket)) waiting.set(socket, waiting.get(socket) - 1);
    changed = true;
  });
  setInterval(() => {
    if (!changed) return;
    changed = false;
    writeFileSync(join(dir, String(process.pid)), JSON.stringify({ parsed, peak, open: waiting.size }));
  }, 20).unref();
}
