// The Worker's isolate memory on workerd, for bench-edge.mjs: the `edge cloudflare` project run by
// miniflare (its worker.js, the site as its assets), the user Worker's heap and ArrayBuffer backing
// stores read through workerd's own inspector (Runtime.getHeapUsage), and the workerd process's RSS.
// Not through wrangler dev: wrangler's inspector proxy sends Network.enable, under which workerd kept
// every asset read of a page open (11,000 sockets and 'Too many open files' on an answer of every
// city). workerd answers inspector messages only between requests (a getHeapUsage sent 17 ms into a
// 19.7 s answer came back at its end), so the heap is read before and right after each answer: what
// the answer left uncollected, a lower bound of its peak (workerd answers no HeapProfiler.collectGarbage,
// so what is live cannot be told from garbage). The RSS is sampled every 10 ms throughout.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** Each scenario `{ label, warm, queries, times }` on a fresh workerd: `times` rounds of `queries` at once (after `warm`), each checked by `check(query, status, body)`. */
export async function workerdMemory(project, scenarios, check) {
  const { Miniflare } = await import(join(ROOT, 'node_modules', 'miniflare', 'dist', 'src', 'index.js'));
  const { default: WebSocket } = await import('ws');
  const config = JSON.parse(readFileSync(join(project.out, 'wrangler.jsonc'), 'utf8').replace(/^\s*\/\/.*$/gm, ''));
  const modules = ['worker.js', 'cities-api-edge.js', 'cities-site.js'].map((f) => ({
    type: 'ESModule',
    path: join(project.out, f),
  }));
  const lines = [];
  for (const { label, warm, queries, times } of scenarios) {
    const inspectorPort = 9400 + Math.floor(Math.random() * 500);
    const mf = new Miniflare({
      modules,
      modulesRoot: project.out,
      compatibilityDate: config.compatibility_date,
      inspectorPort,
      assets: {
        directory: resolve(project.out, config.assets.directory),
        binding: config.assets.binding,
        routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
      },
    });
    try {
      const url = (await mf.ready).origin;
      const pid = workerdPid();
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
      const heap = () =>
        new Promise((done) => {
          pending.set(++id, (u) => done({ total: u.usedSize + u.backingStorageSize, backing: u.backingStorageSize }));
          ws.send(JSON.stringify({ id, method: 'Runtime.getHeapUsage' }));
        });
      const ask = async (query) => {
        const response = await fetch(`${url}/cities/?${query}`);
        const body = Buffer.from(await response.arrayBuffer());
        check(query, response.status, body);
      };
      // The one-time reads (index, the ordering's rank files), then the baseline.
      await ask(warm);
      const base = await heap();
      const rssBase = status(pid, 'VmRSS');
      let rssPeak = rssBase;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, status(pid, 'VmRSS'))), 10);
      const after = [];
      for (let round = 0; round < times; round++) {
        await Promise.all(queries.map(ask));
        after.push(await heap());
      }
      clearInterval(sampler);
      ws.close();
      const most = Math.max(...after.map((a) => a.total));
      const each = after.map((a) => `${mb(a.total)} (backing ${mb(a.backing)})`).join(', ');
      lines.push(
        `  ${label}: heap + backing stores ${mb(base.total)} -> after each answer ${each} (+${mb(most - base.total)}); workerd RSS ${mb(rssBase)} -> peak ${mb(rssPeak)}`,
      );
    } finally {
      await mf.dispose();
    }
  }
  return lines;
}

/** The workerd miniflare started last, a child of this process. */
function workerdPid() {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return Number(
    out
      .split('\n')
      .filter((l) => /workerd serve/.test(l))
      .map((l) => l.trim().split(/\s+/)[0])
      .at(-1),
  );
}

function status(pid, name) {
  return Number(new RegExp(`${name}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
}

function mb(n) {
  return `${(n / 1e6).toFixed(1)} MB`;
}
