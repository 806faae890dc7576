#!/usr/bin/env node
// npm run bench: requests/s and p99 latency of `cities-api serve` for a precomputed page and a
// live page, against a minimal http.createServer sending the same bytes from memory, all
// measured in one run on loopback, each server in its own process. Prints the ratios.
//
//   node scripts/bench-server.mjs [--data FILE] [--duration SECONDS] [--rounds N] [--connections N]
//     [--static QUERY] [--live QUERY]
// The four runs are interleaved for --rounds rounds and each figure is the median, so a
// neighbour's burst on a shared machine does not decide a ratio.
// Then, at scale: serve on the 140k-city benchmark site (npm run bench:data; built with the
// orderings and page sizes of npm run bench:build): RSS of the server (peak and after load)
// against 3 × the dataset's JSON size, and p99 of a live page deep in an ordering under load.
//   [--large-data FILE] [--large-live QUERY] [--skip-large]
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, 'data/cities.csv') },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    static: { type: 'string', default: 'ordering=name_en&page=2' },
    live: { type: 'string', default: 'page_size=7&page=3' },
    'page-sizes': { type: 'string', default: '10,20,50,100' },
    'collation': { type: 'string', default: 'locale' },
    'large-data': { type: 'string', default: join(ROOT, 'bench-data', 'cities-140k.json') },
    'large-live': { type: 'string', default: 'ordering=-name_ar&page_size=7&page=15000' },
    'large-static': { type: 'string', default: 'ordering=name_en&page_size=100&page=700' },
    'skip-large': { type: 'boolean', default: false },
  },
});

/** Starts a child process and resolves with the first http:// URL it prints. */
function start(args, label) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve({ url: m[1], child });
    });
    child.on('exit', (code) => reject(new Error(`${label} exited with ${code}: ${out}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}

async function load(url, label, duration = Number(opts.duration), connections = Number(opts.connections)) {
  const r = await autocannon({ url, connections, duration, pipelining: 1 });
  if (r.non2xx || r.errors || r.timeouts) throw new Error(`${label}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
  return { label, rps: r.requests.average, p99: r.latency.p99 };
}

/** Current and peak resident memory of a process, in MB (Linux /proc). */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)[1]);
  return { rss: kb('VmRSS') / 1000, peak: kb('VmHWM') / 1000 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const MINIMAL = `
const http = require('node:http');
const bodies = JSON.parse(process.argv[1]);
const buffers = Object.fromEntries(Object.entries(bodies).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
http.createServer((req, res) => {
  const body = buffers[req.url];
  res.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json', 'Content-Length': body ? body.length : 0 });
  res.end(body);
}).listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + this.address().port); });
`;

const site = mkdtempSync(join(tmpdir(), 'cities-bench-'));
try {
  const serve = await start([join(ROOT, 'bin/cities-api.js'), 'serve', join(site, 'dist'), '--data', opts.data, '--port', '0', '--page-sizes', opts['page-sizes'], '--collation', opts.collation, '--quiet'], 'serve');
  const staticUrl = `${serve.url}/cities/?${opts.static}`;
  const liveUrl = `${serve.url}/cities/?${opts.live}`;
  const bodies = {};
  for (const [path, url] of [['/static', staticUrl], ['/live', liveUrl]]) {
    bodies[path] = Buffer.from(await (await fetch(url)).arrayBuffer()).toString('base64');
  }
  const minimal = await start(['-e', MINIMAL, JSON.stringify(bodies)], 'minimal server');
  const targets = [
    [`${minimal.url}/static`, 'minimal server, same bytes as the precomputed page'],
    [staticUrl, `cities-api serve, precomputed page (?${opts.static})`],
    [`${minimal.url}/live`, 'minimal server, same bytes as the live page'],
    [liveUrl, `cities-api serve, live page (?${opts.live})`],
  ];
  for (const [url, label] of targets) await load(url, label, 1); // warm-up: JIT, caches, presorted orderings
  const runs = targets.map(() => []);
  for (let round = 0; round < Number(opts.rounds); round++) {
    for (const [i, [url, label]] of targets.entries()) runs[i].push(await load(url, label));
  }
  const results = targets.map(([, label], i) => ({ label, rps: median(runs[i].map((r) => r.rps)), p99: median(runs[i].map((r) => r.p99)) }));
  await stop(minimal.child);
  await stop(serve.child);

  console.log(`\nloopback, ${opts.connections} connections, median of ${opts.rounds} interleaved runs of ${opts.duration} s, dataset ${opts.data}`);
  for (const r of results) console.log(`${r.label.padEnd(66)} ${String(Math.round(r.rps)).padStart(7)} req/s   p99 ${String(r.p99).padStart(4)} ms`);
  const ratio = (a, b) => a.rps / b.rps;
  const [minStatic, served, minLive, live] = results;
  const precomputed = ratio(served, minStatic);
  const computed = ratio(live, minLive);
  console.log(`\nprecomputed / minimal: ${precomputed.toFixed(2)} (target >= 0.80) ${precomputed >= 0.8 ? 'ok' : 'MISSED'}`);
  console.log(`live / minimal:        ${computed.toFixed(2)} (target >= 0.50) ${computed >= 0.5 ? 'ok' : 'MISSED'}`);
  if (!opts['skip-large']) await atScale();
} finally {
  rmSync(site, { recursive: true, force: true });
}

async function atScale() {
  const data = opts['large-data'];
  if (!existsSync(data)) {
    console.error(`\n${data} is missing: deriving it (npm run bench:data) ...`);
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'bench-data.mjs'), '--out', data], { stdio: 'inherit' });
  }
  const dir = join(site, 'large');
  const built = performance.now();
  console.log('\nbuilding the 140k-city site (default, ±name_en, ±name_ar; page sizes 10, 100) ...');
  execFileSync(process.execPath, [join(ROOT, 'bin/cities-api.js'), 'build', '--data', data, '--out', dir, '--orderings', 'default,name_en,-name_en,name_ar,-name_ar', '--page-sizes', '10,100'], { stdio: 'inherit' });
  console.log(`built in ${((performance.now() - built) / 1000).toFixed(1)} s`);
  const started = performance.now();
  const serve = await start([join(ROOT, 'bin/cities-api.js'), 'serve', dir, '--port', '0', '--quiet'], 'serve (140k)');
  const ready = (performance.now() - started) / 1000;
  const atStart = memory(serve.child.pid);
  const targets = [
    [`${serve.url}/cities/?${opts['large-live']}`, `live page deep in an ordering (?${opts['large-live']})`],
    [`${serve.url}/cities/?${opts['large-static']}`, `precomputed page (?${opts['large-static']})`],
    [`${serve.url}/cities/?ordering=name_fr,-name_en&page_size=25&page=5000`, 'live, two-field ordering (?ordering=name_fr,-name_en&page_size=25&page=5000)'],
  ];
  for (const [url, label] of targets) await load(url, label, 1);
  const results = [];
  for (const [url, label] of targets) results.push(await load(url, label));
  // The deep page again under lighter loads: at 32 connections on 2 cores, p99 is mostly queueing.
  const lighter = [];
  for (const connections of [16, 8]) lighter.push({ connections, ...(await load(targets[0][0], targets[0][1], Number(opts.duration), connections)) });
  const after = memory(serve.child.pid);
  await stop(serve.child);
  const budget = (3 * statSync(data).size) / 1e6;
  console.log(`\n140k-city site, loopback, ${opts.connections} connections, ${opts.duration} s each; server ready in ${ready.toFixed(1)} s`);
  for (const r of results) console.log(`${r.label.padEnd(82)} ${String(Math.round(r.rps)).padStart(7)} req/s   p99 ${String(r.p99).padStart(4)} ms`);
  console.log(`serve RSS: ${atStart.rss.toFixed(0)} MB at start, ${after.rss.toFixed(0)} MB after load, peak ${after.peak.toFixed(0)} MB; budget 3 × dataset JSON = ${budget.toFixed(0)} MB ${after.peak <= budget ? 'ok' : 'MISSED'}`);
  for (const r of lighter) console.log(`deep live page at ${r.connections} connections: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms`);
  console.log(`deep live page p99 at ${opts.connections} connections: ${results[0].p99} ms (target < 5 ms) ${results[0].p99 < 5 ? 'ok' : 'MISSED'}`);
}
