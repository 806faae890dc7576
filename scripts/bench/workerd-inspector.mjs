// The `edge cloudflare` project in `out` run by miniflare (its worker.js, the site as its assets),
// with the user Worker's own inspector open (not wrangler dev's: its proxy sends Network.enable,
// under which workerd kept every asset read of a page open, 11,000 sockets on an answer of every
// city): what bench-edge's memory figures (workerd-memory.mjs) and bench-cloudflare-cpu's Worker
// time read. `send(method, params)` resolves with the message's result.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export async function inspectedWorker(out) {
  const { Miniflare } = await import(join(ROOT, 'node_modules', 'miniflare', 'dist', 'src', 'index.js'));
  const { default: WebSocket } = await import('ws');
  const config = JSON.parse(readFileSync(join(out, 'wrangler.jsonc'), 'utf8').replace(/^\s*\/\/.*$/gm, ''));
  const inspectorPort = 9400 + Math.floor(Math.random() * 500);
  const mf = new Miniflare({
    modules: ['worker.js', 'cities-api-edge.js', 'cities-site.js'].map((f) => ({
      type: 'ESModule',
      path: join(out, f),
    })),
    modulesRoot: out,
    compatibilityDate: config.compatibility_date,
    inspectorPort,
    assets: {
      directory: resolve(out, config.assets.directory),
      binding: config.assets.binding,
      routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
    },
  });
  try {
    const url = (await mf.ready).origin;
    const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json();
    const ws = new WebSocket(targets.find((t) => /core:user/.test(t.webSocketDebuggerUrl)).webSocketDebuggerUrl);
    await new Promise((done, fail) => ws.once('open', done).once('error', fail));
    const pending = new Map();
    let id = 0;
    ws.on('message', (data) => {
      const message = JSON.parse(data);
      pending.get(message.id)?.(message.result);
      pending.delete(message.id);
    });
    const send = (method, params = {}) =>
      new Promise((done) => {
        pending.set(++id, done);
        ws.send(JSON.stringify({ id, method, params }));
      });
    return {
      url,
      send,
      async close() {
        ws.close();
        await mf.dispose();
      },
    };
  } catch (error) {
    await mf.dispose();
    throw error;
  }
}
