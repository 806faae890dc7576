// The Worker's isolate memory on workerd, for bench-edge.mjs: the `edge cloudflare` project run by
// miniflare (workerd-inspector.mjs), the user Worker's heap and ArrayBuffer backing stores read
// through workerd's own inspector (Runtime.getHeapUsage), and the workerd process's RSS. workerd
// answers inspector messages only between requests (a getHeapUsage sent 17 ms into a 19.7 s answer
// came back at its end), so the heap is read before and right after each answer: what the answer
// left uncollected, a lower bound of its peak (workerd answers no HeapProfiler.collectGarbage, so
// what is live cannot be told from garbage). The RSS is sampled every 10 ms throughout.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { inspectedWorker } from './workerd-inspector.mjs';

/** Each scenario `{ label, warm, queries, times }` on a fresh workerd: `times` rounds of `queries` at once (after `warm`), each checked by `check(query, status, body)`. */
export async function workerdMemory(project, scenarios, check) {
  const lines = [];
  for (const { label, warm, queries, times } of scenarios) {
    const worker = await inspectedWorker(project.out);
    try {
      const pid = workerdPid();
      const heap = async () => {
        const u = await worker.send('Runtime.getHeapUsage');
        return { total: u.usedSize + u.backingStorageSize, backing: u.backingStorageSize };
      };
      const ask = async (query) => {
        const response = await fetch(`${worker.url}/cities/?${query}`);
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
      const most = Math.max(...after.map((a) => a.total));
      const each = after.map((a) => `${mb(a.total)} (backing ${mb(a.backing)})`).join(', ');
      lines.push(
        `  ${label}: heap + backing stores ${mb(base.total)} -> after each answer ${each} (+${mb(most - base.total)}); workerd RSS ${mb(rssBase)} -> peak ${mb(rssPeak)}`,
      );
    } finally {
      await worker.close();
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
