#!/usr/bin/env node
// A pipelining flood against serve (issue #26): one connection sends requests as fast as the
// server takes them and reads nothing. Prints the server's RSS (its process tree's, so --workers
// counts every worker) before, during and after the flood, then a precomputed page's latency
// with wrk on fresh serves, each checkout in turn.
//   node scripts/bench-flood.mjs --site DIR [--root CHECKOUT]... [--duration 10] [--workers N] [--rounds 3]
// --root: a checkout's bin/ and lib/ (e.g. one at the commit before a change); repeat it to compare,
// this checkout by default. Each figure of a later root is also given as a ratio to the first's.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { loader } from './bench/load.mjs';
import { median } from './bench/machine.mjs';
import { cpuSeconds, processTree, startNode, stop } from './bench/servers.mjs';

const { values } = parseArgs({
  options: {
    site: { type: 'string' },
    root: { type: 'string', multiple: true, default: [resolve(import.meta.dirname, '..')] },
    duration: { type: 'string', default: '10' },
    workers: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    query: { type: 'string', default: 'page=2' },
    connections: { type: 'string', default: '8' },
  },
});
if (!values.site)
  throw new Error('--site DIR: a built site (e.g. cities-api build --orderings default --page-sizes 10,100)');
const roots = values.root.map((root) => resolve(root));
const seconds = Number(values.duration);
const target = `/cities/?${values.query}`;

const serve = (root) =>
  startNode(
    [
      join(root, 'bin/cities-api.js'),
      'serve',
      '--site',
      values.site,
      '--port',
      '0',
      '--quiet',
      '--workers',
      values.workers,
    ],
    { label: `serve (${root})` },
  );

/** The process tree's resident memory, MB. */
function rssMb(pid) {
  let kb = 0;
  for (const p of processTree(pid)) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {} // a process that just ended
  }
  return kb / 1024;
}

/** One connection writing pipelined requests for `ms` as fast as the server takes them, reading nothing. */
async function flood(url, ms) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.pause();
  socket.on('error', () => {});
  await new Promise((done) => socket.once('connect', done));
  const one = Buffer.from(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
  const chunk = Buffer.concat(Array.from({ length: Math.floor(65536 / one.length) }, () => one));
  const end = performance.now() + ms;
  while (performance.now() < end && !socket.destroyed) {
    if (!socket.write(chunk))
      await Promise.race([new Promise((done) => socket.once('drain', done)), sleep(end - performance.now())]);
  }
  const sent = Math.floor((socket.bytesWritten - socket.writableLength) / one.length);
  return { sent, close: () => socket.resetAndDestroy() };
}

const mb = (x) => `${x.toFixed(0)} MB`;
const ratio = (x, first) => (first ? ` (${(x / first).toFixed(2)}x)` : '');

console.log(
  `flood: ${seconds} s on one connection, GET ${target} pipelined, nothing read; serve --workers ${values.workers}`,
);
const floods = [];
for (const root of roots) {
  const { url, child, pid } = await serve(root);
  await sleep(1000);
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  const client = await flood(url, seconds * 1000);
  const atEnd = rssMb(pid);
  client.close();
  await sleep(2000);
  clearInterval(sampler);
  const after = rssMb(pid);
  const first = floods[0];
  floods.push({ before, peak, atEnd, after });
  console.log(
    `  ${root}: RSS ${mb(before)} before, ${mb(peak)} peak${ratio(peak - before, first && first.peak - first.before)} ` +
      `(+${mb(peak - before)}), ${mb(atEnd)} at the flood's end, ${mb(after)} 2 s after its reset; ` +
      `the kernel took ${client.sent} requests`,
  );
  await stop(child);
}

const wrk = await loader('wrk');
const rounds = Number(values.rounds);
console.log(
  `latency: ${wrk.describe}, ${values.connections} connections, ${rounds} rounds of 5 s each, the checkouts in turn`,
);
/** One wrk run against `s`, with the CPU serve used meanwhile (1: one CPU) and the requests per CPU-second. */
async function measured(s) {
  const cpu = cpuSeconds(s.pid);
  const run = await wrk.load(`${s.url}${target}`, { duration: 5, connections: Number(values.connections) });
  const used = (cpuSeconds(s.pid) - cpu) / run.seconds;
  return { ...run, cpu: used, perCpu: run.rps / used };
}
const servers = [];
for (const root of roots) servers.push({ root, ...(await serve(root)), runs: [] });
try {
  for (const s of servers)
    await wrk.load(`${s.url}${target}`, { duration: 2, connections: Number(values.connections) });
  for (let round = 0; round < rounds; round++)
    for (const s of round % 2 ? [...servers].reverse() : servers) s.runs.push(await measured(s));
  const first = servers[0];
  const KEYS = ['p50', 'p99', 'rps', 'perCpu'];
  for (const s of servers) {
    const [p50, p99, rps, perCpu] = KEYS.map((k) => median(s.runs.map((r) => r[k])));
    const base = first !== s && KEYS.map((k) => median(first.runs.map((r) => r[k])));
    console.log(
      `  ${s.root}: p50 ${p50.toFixed(3)} ms${ratio(p50, base?.[0])}, p99 ${p99.toFixed(3)} ms${ratio(p99, base?.[1])}, ` +
        `${rps.toFixed(0)} req/s${ratio(rps, base?.[2])}, ${perCpu.toFixed(0)} req per CPU-second of serve${ratio(perCpu, base?.[3])} ` +
        `(medians of ${rounds}; server CPU ${s.runs.map((r) => `${(100 * r.cpu).toFixed(0)}%`).join(' ')})`,
    );
  }
} finally {
  for (const s of servers) await stop(s.child);
  wrk.close();
}
