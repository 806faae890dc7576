#!/usr/bin/env node
// Deno's memory over many answers in a row (#25): the edge Deno project under `deno serve`, with V8's
// defaults (as Deno Deploy runs an entry point) and with the command `edge deno` prints (its
// --v8-flags), answering one query N times, one after another, from a fresh server. The isolate's
// heap + external (Deno.memoryUsage(), what an isolate's memory limit counts) is printed by the
// server every 10 ms, with V8's new space capacity (node:v8). Per run, both readings of the goal
// "memory per request <= 32 MB above the instance's baseline":
//   - peak: the highest value over answers 2..N against the lowest value right after the first
//     answer (its one-time reads made);
//   - per request: each answer's highest value against the warmed instance's baseline, the lowest
//     value seen between answers (a 30 ms pause after each); the largest and the median.
// Each is also read for V8's heap and the external memory (array buffers' bytes) apart, and for the
// process's RSS (/proc/PID/status, read by this script every 10 ms): all the isolate's memory and
// Deno's own (Rust's buffers, the allocator's free pages). --concurrent N: each answer is N of the
// query asked at once (on N connections), the figures per such step. Variants run in turn, round
// after round, so that a neighbour's load hits them alike. Every answer must be a 200 of the same
// bytes (the first and the last hashed). Memory is not latency: this may run on a loaded machine,
// but it loads one core for its duration. --platform netlify: Netlify's edge function instead (Netlify
// Edge Functions run on Deno), under deno serve with V8's defaults or a variant's flags (its project
// has no command of its own), reading the site's edge files over HTTP from a server in this process
// that answers byte ranges, as Netlify's CDN does (the function's page cap: at most 10,000 cities).
//
//   node scripts/bench-deno-memory.mjs --site DIR [--platform deno|netlify] [--answers 60,200] [--rounds 2] [--query Q] [--variants defaults,command,--FLAG=X] [--concurrent N]
//
// DIR: a built site (e.g. bench-data/cities-140k.json built with --orderings default); the project
// is written beside it, in DIR/../bench-deno-memory/ (Netlify's: DIR/../bench-netlify-memory/, the
// site linked inside it). Default query: every city on one page.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { lib } from './bench/edge-lib.mjs';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    site: { type: 'string' },
    answers: { type: 'string', default: '60,200' },
    rounds: { type: 'string', default: '2' },
    query: { type: 'string', default: 'page_size=1000000' },
    variants: { type: 'string', default: 'defaults,command' },
    concurrent: { type: 'string', default: '1' },
    platform: { type: 'string', default: 'deno' },
  },
});
const NETLIFY = opts.platform === 'netlify';
if (!['deno', 'netlify'].includes(opts.platform)) throw new Error('--platform deno|netlify');
const CONCURRENT = Number(opts.concurrent);
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENT });
if (!opts.site) throw new Error('--site DIR: a built site (see the header)');
const site = resolve(opts.site);
const out = join(dirname(site), NETLIFY ? 'bench-netlify-memory' : 'bench-deno-memory');
rmSync(out, { recursive: true, force: true });
const { writeEdgeProject } = await lib('app/edge-project.js');
// Netlify publishes a directory of its project: the site linked into it.
if (NETLIFY) {
  mkdirSync(out);
  symlinkSync(site, join(out, 'site'), 'dir');
}
const project = await writeEdgeProject(opts.platform, NETLIFY ? join(out, 'site') : site, out);
const files = NETLIFY ? await siteFiles(site) : undefined;
// The project's module, heap + external and new space capacity printed every 10 ms (unref'd: a timer
// holding the event loop keeps deno serve from exiting on SIGTERM). Netlify's function is given the
// request on the file server's origin (where it reads the edge files) and a context with no file.
const server = NETLIFY
  ? `import fn from './netlify/edge-functions/cities-api/cities-api.mjs';\nconst next = () => Promise.reject(new Error('no file here'));\nconst server = { fetch: (r) => { const u = new URL(r.url); return fn(new Request(${JSON.stringify(files?.origin)} + u.pathname + u.search, { headers: r.headers }), { next }); } };\n`
  : `import server from './main.js';\n`;
writeFileSync(
  join(out, 'bench-memory.js'),
  `${server}import { getHeapSpaceStatistics } from 'node:v8';\nDeno.unrefTimer(setInterval(() => { const m = Deno.memoryUsage(); const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space'); console.log('M ' + (m.heapUsed + m.external) + ' ' + young.space_size + ' ' + m.heapUsed + ' ' + m.external); }, 10));\nexport default server;\n`,
);

console.log(
  `deno serve${NETLIFY ? " of Netlify's edge function" : ''}, ?${opts.query}${CONCURRENT > 1 ? `, ${CONCURRENT} at once` : ''}, ${opts.rounds} rounds; load ${loadavg()}`,
);
console.log(`  the command: ${project.deploy}`);
for (let round = 1; round <= Number(opts.rounds); round++)
  for (const answers of opts.answers.split(',').map(Number))
    for (const variant of opts.variants.split(',')) {
      const run = await inARow(variant, answers);
      console.log(`  round ${round} ${variant.padEnd(8)} ${String(answers).padStart(4)} answers: ${run}`);
    }
files?.close();

/** N answers in a row from a fresh server: the figures as one line. */
async function inARow(variant, answers) {
  const server = await serve(variant);
  const load = loadavg();
  try {
    const marks = [];
    let first;
    const cpu = server.cpu();
    for (let i = 0; i < answers; i++) {
      const start = performance.now();
      const hash = i === 0 || i === answers - 1;
      const all = await Promise.all(Array.from({ length: CONCURRENT }, () => get(server.url, hash)));
      marks.push([start, performance.now()]);
      for (const got of all) {
        if (got.status !== 200) throw new Error(`?${opts.query}: ${got.status}`);
        first ??= got;
        if (got.hash && got.hash !== first.hash) throw new Error(`?${opts.query}: answer ${i + 1} differs`);
      }
      await new Promise((r) => setTimeout(r, 30));
    }
    const cpuEach = (server.cpu() - cpu) / (answers * CONCURRENT);
    const { samples, rss } = server;
    // A reading's peak against the lowest value after the first answer, and the lowest between answers.
    const figures = (series, k) => {
      const within = (from, to) => series.filter(([t]) => t >= from && t < to).map((sample) => sample[k]);
      const gap = (i) => within(marks[i][1], marks[i + 1]?.[0] ?? Number.POSITIVE_INFINITY);
      const peaks = marks.slice(1).map(([from, to]) => Math.max(...within(from, to + 30)));
      const baseline = Math.min(...marks.map((_, i) => Math.min(...gap(i))));
      return { peak: Math.max(...peaks) - Math.min(...gap(0)), peaks, baseline };
    };
    const isolate = figures(samples, 1);
    const [heap, external, resident] = [figures(samples, 3), figures(samples, 4), figures(rss, 1)];
    const young = samples.at(-1)[2];
    return [
      `peak +${mb(isolate.peak)} against the first answer's`,
      `per request +${mb(Math.max(...isolate.peaks) - isolate.baseline)} max, +${mb(median(isolate.peaks) - isolate.baseline)} median above the lowest between answers (${mb(isolate.baseline)})`,
      `heap peak +${mb(heap.peak)}, external +${mb(external.peak)}`,
      `RSS peak +${mb(resident.peak)} against the first answer's (${mb(resident.baseline)} lowest)`,
      `V8 new space ${mb(young)} at the end`,
      `CPU ${Math.round(cpuEach)} ms an answer`,
      `${mb(first.bytes)} ${first.hash}`,
      `load ${load} -> ${loadavg()}`,
    ].join(', ');
  } finally {
    await server.stop();
  }
}

/** deno serve of the project: as its command says (command), without its --v8-flags (defaults: V8's), or with V8 flags of the variant's own (e.g. --max-heap-size=512: an isolate sized as Deno Deploy's). */
async function serve(variant) {
  const flags = variant.startsWith('--') ? `--v8-flags=${variant}` : undefined;
  if (NETLIFY && variant === 'command')
    throw new Error("--platform netlify: Netlify's project has no deno command (variants: defaults, --FLAG=X)");
  const [, command, ...args] = NETLIFY
    ? ['deno', 'serve', '--allow-net', ...(flags ? [flags] : []), 'bench-memory.js']
    : project.deploy
        .split(' ')
        .map((arg) => (flags && arg.startsWith('--v8-flags=') ? flags : arg))
        .filter((arg) => !(variant === 'defaults' && arg.startsWith('--v8-flags=')));
  args[args.length - 1] = 'bench-memory.js';
  const child = spawn(
    join(ROOT, 'node_modules', '.bin', 'deno'),
    [command, '--host', '127.0.0.1', '--port', '0', ...args],
    {
      cwd: out,
      env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const samples = [];
  // The process's RSS every 10 ms (VmRSS, kB).
  const rss = [];
  const reading = setInterval(() => {
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
      if (kb) rss.push([performance.now(), Number(kb) * 1024]);
    } catch {}
  }, 10);
  let pending = '';
  const url = await new Promise((resolve, reject) => {
    const seen = (data) => {
      const lines = (pending + data).split('\n');
      pending = lines.pop();
      for (const line of lines) {
        const m = /^M (\d+) (\d+) (\d+) (\d+)/.exec(line);
        if (m) samples.push([performance.now(), ...m.slice(1).map(Number)]);
        else if (/Listening on (http:\/\/[^\s/]+)/.test(line)) resolve(/Listening on (http:\/\/[^\s/]+)/.exec(line)[1]);
        else if (line.trim()) process.stderr.write(`deno: ${line}\n`);
      }
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.once('exit', (code) => reject(new Error(`deno serve exited with ${code}`)));
  });
  return {
    url,
    samples,
    rss,
    // The process's user + system CPU in ms (/proc/PID/stat, clock ticks of 10 ms).
    cpu: () => {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    stop: () => {
      clearInterval(reading);
      return new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM'));
    },
  };
}

/** One answer read through (hashed when asked), on a connection kept alive between answers. */
function get(url, hash) {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/cities/?${opts.query}`, { agent }, (res) => {
        const digest = hash ? createHash('sha256') : undefined;
        let bytes = 0;
        res.on('data', (chunk) => {
          bytes += chunk.length;
          digest?.update(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode, bytes, hash: digest?.digest('hex').slice(0, 16) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** The site's files over HTTP, byte ranges answered with a 206 (Netlify's CDN, which the function reads its edge files from). */
async function siteFiles(root) {
  const files = http.createServer((req, res) => {
    const path = join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    let size;
    try {
      size = statSync(path).size;
    } catch {
      return res.writeHead(404).end();
    }
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (!range) return createReadStream(path).pipe(res.writeHead(200, { 'content-length': size }));
    const [start, end] = [Number(range[1]), Math.min(Number(range[2]), size - 1)];
    const headers = { 'content-range': `bytes ${start}-${end}/${size}`, 'content-length': end - start + 1 };
    createReadStream(path, { start, end }).pipe(res.writeHead(206, headers));
  });
  await new Promise((listening) => files.listen(0, '127.0.0.1', listening));
  return { origin: `http://127.0.0.1:${files.address().port}`, close: () => files.close() };
}

function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}
function mb(n) {
  return `${(n / 1e6).toFixed(1)} MB`;
}
function loadavg() {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
