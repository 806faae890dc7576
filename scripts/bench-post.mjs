#!/usr/bin/env node
// npm run bench:post: POST latency of `cities-api serve --writable` and the time until its files
// are current again, at 20k and 140k cities (datasets from `node scripts/bench-data.mjs --bundled N`,
// made here when missing). Per size: serve is started (orderings default,±name_en, page sizes
// 10,100), the three orderings are read once (so the table keeps their ranks and orders), then
// CLIENTS clients (wrk's connections, kept alive as an app's HTTP client keeps them) send new
// cities for SECONDS, each waiting for its answer; then the time until the dataset file holds them
// all (its write-ahead log gone) and the site's files answer again (the site's _cities-api/behind
// marker gone). wrk (C, epoll) is the load: a Node client used 0.85 ms of CPU a POST, half of what
// serve used, on the same 2 cores.
//
// --posts-only: serve is stopped once the POSTs are answered, without waiting for the files to be
// current again (minutes at 140k): for A/B runs of the POSTs' CPU.
//
// --cpu-prof DIR: serve runs with node's --cpu-prof, its profiles (one per thread) written in DIR;
// each is then summarised for the POST burst alone (from the first POST sent to the last 201):
// its busy CPU, per POST, and its busiest functions (bench/cpu-profile.mjs).
//
//   node scripts/bench-post.mjs [--sizes 20000,140000] [--clients 16] [--seconds 1] [--workers 1] [--posts-only] [--cpu-prof DIR]
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { analyze } from './bench/cpu-profile.mjs';
import { chooseTool, loader } from './bench/load.mjs';
import { schedOf } from './bench/machine.mjs';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    sizes: { type: 'string', default: '20000,140000' },
    clients: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '1' },
    workers: { type: 'string', default: '1' },
    'cpu-prof': { type: 'string' },
    'posts-only': { type: 'boolean', default: false },
  },
});
const TOKEN = 'bench-token-0123456789';
const NAMES = ['ar', 'en', 'ch', 'fr', 'ur', 'fa', 'sp', 'de', 'it', 'uk', 'hi', 'id', 'ru', 'pt', 'ms', 'tr'];

function send(url, method, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method,
      agent: false,
      headers: body ? { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}` } : {},
    });
    req.on('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function startServe(site, data) {
  const args = [join(ROOT, 'bin/cities-api.js'), 'serve', '--site', site, '--data', data, '--port', '0', '--writable'];
  args.push('--collation', 'codepoint', '--orderings', 'default,name_en,-name_en', '--page-sizes', '10,100');
  args.push('--workers', opts.workers, '--quiet');
  const profile = opts['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${opts['cpu-prof']}`] : [];
  const child = spawn(process.execPath, [...profile, ...args], { env: { ...process.env, CITIES_API_TOKEN: TOKEN } });
  let output = '';
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      output += d;
      const m = / at (http:\/\/[^/\s]+)/.exec(output);
      if (m) resolve({ child, url: m[1], output: () => output });
    });
    child.on('exit', (code) => reject(new Error(`serve exited (${code}):\n${output}`)));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** The monotonic clock V8 stamps profile samples with, in µs. */
const clockUs = () => Number(process.hrtime.bigint() / 1000n);
const profiles = () => (opts['cpu-prof'] && existsSync(opts['cpu-prof']) ? readdirSync(opts['cpu-prof']) : []);

/** Each profile serve's threads wrote (`names`), summarised for the window of the POST burst. */
function profileBurst(names, window, posts) {
  console.log(`  the burst, for bench/cpu-profile.mjs: --from ${window.from} --to ${window.to}`);
  for (const name of names.sort()) {
    const a = analyze(JSON.parse(readFileSync(join(opts['cpu-prof'], name), 'utf8')), window);
    if (!a.busy) continue;
    const top = a.functions
      .slice(0, 8)
      .map(([f, us]) => `${(us / 1000).toFixed(0)} ms ${f}`)
      .join('; ');
    console.log(
      `  profile ${name}: busy ${(a.busy / 1000).toFixed(0)} ms in the burst (${(a.busy / 1000 / posts).toFixed(2)} ms a POST): ${top}`,
    );
  }
}

async function benchSize(size) {
  const label = size % 1000 ? String(size) : `${size / 1000}k`;
  const source = join(ROOT, 'bench-data', `cities-bundled-${label}.json`);
  if (!existsSync(source))
    execFileSync(process.execPath, [join(ROOT, 'scripts/bench-data.mjs'), '--bundled', String(size), '--out', source]);
  const dir = mkdtempSync(join(tmpdir(), 'bench-post-'));
  const data = join(dir, 'cities.json');
  copyFileSync(source, data);
  const site = join(dir, 'site');
  const profiledBefore = new Set(profiles());
  let window;
  let total = 0;
  const started = performance.now();
  const server = await startServe(site, data);
  const startup = performance.now() - started;
  try {
    for (const ordering of ['', '?ordering=name_en', '?ordering=-name_en'])
      await send(`${server.url}/cities/${ordering}`);
    const clients = Number(opts.clients);
    const [schedBefore, begin] = [schedOf(server.child.pid), performance.now()];
    window = { from: clockUs() };
    // Each POST a city of its own: names numbered from 1 (wrk's one thread).
    const names = NAMES.map((l) => `\\"name_${l}\\":\\"Bench " .. n .. " ${l}\\"`).join(',');
    const lua = [
      'local n = 0',
      `local headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Token ${TOKEN}" }`,
      'request = function()',
      '  n = n + 1',
      `  return wrk.format("POST", "/cities/", headers, "{${names}}")`,
      'end',
    ].join('\n');
    const r = await wrk.load(`${server.url}/cities/`, { duration: opts.seconds, connections: clients, lua });
    const acknowledged = performance.now();
    window.to = clockUs();
    const schedAfter = schedOf(server.child.pid);
    const elapsed = acknowledged - begin;
    // wrk fails on a status above 399; a 2xx that stored nothing shows here. POSTs cut off when wrk
    // stopped may have been stored as well: at most one a connection.
    const count = JSON.parse((await send(`${server.url}/cities/?ordering=-name_en`)).body).count;
    if (count < size + r.requests || count > size + r.requests + clients)
      throw new Error(`answered ${count} cities after ${r.requests} POSTs answered 201 to ${size}`);
    total = r.requests;
    const log = join(dir, '.cities.json.wal');
    const marker = join(site, '_cities-api', 'behind');
    while (!opts['posts-only'] && (existsSync(log) || existsSync(marker))) await sleep(20);
    const current = performance.now();
    const ms = (v) => `${v.toFixed(1)} ms`;
    console.log(
      `${label} cities, ${opts.workers} worker(s): serve up in ${(startup / 1000).toFixed(1)} s; ${total} POSTs by ${clients} clients (wrk, kept-alive connections) in ${(r.seconds).toFixed(2)} s: ` +
        `p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, max ${ms(r.max)} (goal p50 <= 20 ms, p99 <= 100 ms); ` +
        (opts['posts-only']
          ? 'files current again: not waited for (--posts-only)'
          : `files current again ${((current - acknowledged) / 1000).toFixed(1)} s after the last 201`),
    );
    // Where the POSTs' time went: serve's CPU, its wait for a CPU (a 2-core machine shared with wrk), wrk's CPU.
    if (schedBefore && schedAfter) {
      const d = (k) => schedAfter[k] - schedBefore[k];
      console.log(
        `  meanwhile (${(elapsed / 1000).toFixed(2)} s) serve's threads ran ${ms(d('ran'))} of CPU (${ms(d('ran') / total)} a POST) and waited ${ms(d('waited'))} for a CPU ` +
          `(its main thread ran ${ms(d('mainRan'))}, waited ${ms(d('mainWaited'))}); wrk ran ${ms(r.loaderCpu * r.seconds * 1000)}`,
      );
    }
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
  if (window?.to)
    profileBurst(
      profiles().filter((name) => !profiledBefore.has(name)),
      window,
      total,
    );
}

chooseTool('wrk');
const wrk = await loader('wrk');
try {
  for (const size of opts.sizes.split(',').map(Number)) await benchSize(size);
} finally {
  wrk.close();
}
