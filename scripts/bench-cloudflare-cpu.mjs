#!/usr/bin/env node
// What a computed answer costs on Cloudflare for two sites built `--for cloudflare` (e.g. one by
// the previous version, the baseline, measured in the same run): each site's Wrangler project
// (`cities-api edge cloudflare`) on workerd (wrangler's dev server, both running at once), and
// this version's edge source in Node reading each site's files whole. Per query kind (thin
// multi-field pages whose first field ties in large groups, pages of one layout, a page of every
// city), the same distinct pages asked of each site in turn (A B, then B A, ...), one at a time:
// - isolate: the same project under miniflare, the Worker's own time from V8's CPU profiler
//   (what Cloudflare's CPU limit counts; isolateRuntime says how), and wall times;
// - workerd: the CPU of the process that runs the Worker (its threads' schedstat, ns; it also
//   serves the assets the Worker reads, which Cloudflare does not bill the Worker for) and the wall
//   time per answer (median, p95), and each fresh Worker's first answer (index and rank files read);
// - Node: this process's CPU (all threads: Node inflates on its thread pool) per answer.
// Every pair of bodies and ETags must be identical between the sites.
//
//   node scripts/bench-cloudflare-cpu.mjs --site OLD --site NEW [--requests 20] [--all 3] [--runtimes workerd,isolate,node] [--kinds LABEL,...]
// Reads lib/ (npm run build first); writes each project in a temporary directory (and the site's .assetsignore).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { schedOf } from './bench/machine.mjs';
import { inspectedWorker } from './bench/workerd-inspector.mjs';
import { lib, parseQuery } from './bench/edge-lib.mjs';

const { values: opts } = parseArgs({
  options: {
    site: { type: 'string', multiple: true },
    requests: { type: 'string', default: '20' },
    all: { type: 'string', default: '3' },
    runtimes: { type: 'string', default: 'workerd,isolate,node' },
    // Only the kinds whose label contains one of these (comma-separated).
    kinds: { type: 'string', default: '' },
  },
});
const sites = opts.site ?? [];
if (sites.length !== 2) throw new Error('give two sites: --site OLD --site NEW');
const [REQUESTS, ALL] = [Number(opts.requests), Number(opts.all)];
const RUNTIMES = opts.runtimes.split(',');
const BASE = 'https://api.example.org';
const [{ writeEdgeProject }, { EdgeSource }] = await Promise.all(
  ['app/edge-project.js', 'site/edge-source.js'].map(lib),
);
const count = JSON.parse(readFileSync(join(sites[0], '_cities-api', 'edge', 'index.json'), 'utf8')).count;

/** Page i of n spread over the list (never its first). */
const page = (ordering, size, n) => (i) => {
  const pages = Math.ceil(count / size);
  return `ordering=${ordering}&page_size=${size}&page=${2 + Math.floor(((pages - 2) * (i + 0.5)) / n)}`;
};
const KINDS = [
  ['thin multi-field name_it,name_en; 10', page('name_it,name_en', 10, REQUESTS), REQUESTS],
  ['thin multi-field name_it,name_en; 100', page('name_it,name_en', 100, REQUESTS), REQUESTS],
  ['thin multi-field name_de,name_ar; 100', page('name_de,name_ar', 100, REQUESTS), REQUESTS],
  ['thin multi-field -name_sp,-top; 100', page('-name_sp,-top', 100, REQUESTS), REQUESTS],
  ['one layout name_it (fine blocks); 100', page('name_it', 100, REQUESTS), REQUESTS],
  ['one layout name_ar; 100', page('name_ar', 100, REQUESTS), REQUESTS],
  ['every city, ordering=name_it', (i) => `ordering=name_it&page_size=${count + i}`, ALL],
  ['every city, ordering=-name_de', (i) => `ordering=-name_de&page_size=${count + i}`, ALL],
];
const wanted = opts.kinds.split(',').filter(Boolean);
const kinds = KINDS.filter(([label]) => !wanted.length || wanted.some((w) => label.includes(w)));
const FIRST = 'ordering=name_it,name_en&page_size=100&page=2';

const ms = (x) => `${x.toFixed(2)} ms`;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const median = (xs) => pct(xs, 0.5);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * The workerd processes of this process's tree, live (not ended, nor a zombie not yet reaped), each
 * with its command line: wrangler's dev server runs two a Worker (its proxy's, then the Worker's).
 */
function liveWorkerds() {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .flatMap((pid) => {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'workerd' || !isDescendant(pid)) return [];
        const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[0];
        return state === 'Z' || state === 'X' ? [] : [{ pid, command: readFileSync(`/proc/${pid}/cmdline`, 'utf8') }];
      } catch {
        return [];
      }
    });
}
/**
 * The Worker's workerd found again before each answer: Miniflare ends it and starts another when its
 * config changes (the second Worker's start restarts the first's), with the same command line (its
 * --external-addr names the Miniflare's own loopback port), so the live one of that command line.
 */
function workerdOf(command) {
  const found = liveWorkerds().filter((w) => w.command === command);
  if (found.length !== 1) throw new Error(`${found.length} live workerd processes run the Worker (${command})`);
  return found[0].pid;
}
function isDescendant(pid) {
  for (let p = pid; p > 1; ) {
    if (p === process.pid) return true;
    p = Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  }
  return false;
}

async function workerdRuntime(site, i) {
  const out = join(mkdtempSync(join(tmpdir(), 'cities-api-cfcpu-')), `edge-${i}`);
  await writeEdgeProject('cloudflare', site, out);
  process.env.WRANGLER_SEND_METRICS = 'false';
  process.env.WRANGLER_LOG = 'error';
  const { unstable_startWorker } = await import('wrangler');
  const before = new Set(
    readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .map(Number),
  );
  // Each its own name (both projects say cities-api) and no watching: two dev servers of one name
  // in one process restarted each other's workerd (and one's bundle failed: its temporary entry gone).
  const worker = await unstable_startWorker({
    name: `cities-api-${i}`,
    config: join(out, 'wrangler.jsonc'),
    dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, logLevel: 'error', watch: false },
  });
  await worker.ready;
  const url = (await worker.url).origin;
  // An asset first: the Worker's workerd starts, but its edge source reads nothing yet.
  await (await fetch(`${url}/openapi.json`)).arrayBuffer();
  // The Worker's: the newest workerd started since (the proxy's starts first).
  const started = liveWorkerds().filter((w) => !before.has(w.pid));
  const own = started.sort((a, b) => b.pid - a.pid)[0];
  if (!own) throw new Error('no workerd process found');
  return {
    name: 'workerd',
    async ask(q) {
      const pid = workerdOf(own.command);
      const cpu = schedOf(pid)?.ran;
      const t = performance.now();
      const response = await fetch(`${url}/cities/?${q}`);
      const body = Buffer.from(await response.arrayBuffer());
      const wall = performance.now() - t;
      const after = schedOf(pid)?.ran;
      if (cpu === undefined || after === undefined) throw new Error(`the Worker's workerd (${pid}) ended during ?${q}`);
      return { status: response.status, etag: response.headers.get('etag'), body, wall, cpu: after - cpu };
    },
    async stop() {
      await worker.dispose();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      rmSync(join(out, '..'), { recursive: true, force: true });
    },
  };
}

/**
 * The same project under miniflare (workerd) with the Worker's inspector: V8's CPU profiler on the
 * Worker's isolate, sampling every 100 µs; its samples not '(idle)' x 100 µs are the Worker's own
 * time (its asset reads are other isolates' work, and a wait for them is no sample of its code),
 * about what Cloudflare's CPU limit counts. An approximation: on a loaded machine a thread
 * descheduled while the isolate runs may count too, alike for A and B asked in turn.
 */
async function isolateRuntime(site, i) {
  const out = join(mkdtempSync(join(tmpdir(), 'cities-api-cfcpu-')), `edge-${i}`);
  await writeEdgeProject('cloudflare', site, out);
  const { url, send, close } = await inspectedWorker(out);
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: 100 });
  return {
    name: 'isolate',
    async ask(q) {
      await send('Profiler.start');
      const t = performance.now();
      const response = await fetch(`${url}/cities/?${q}`);
      const body = Buffer.from(await response.arrayBuffer());
      const wall = performance.now() - t;
      const { profile } = await send('Profiler.stop');
      const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
      const busy = profile.samples.filter((s) => !idle.has(s)).length;
      return { status: response.status, etag: response.headers.get('etag'), body, wall, cpu: busy * 0.1 };
    },
    async stop() {
      await close();
      rmSync(join(out, '..'), { recursive: true, force: true });
    },
  };
}

async function nodeRuntime(site) {
  const source = new EdgeSource(async (path) => new Uint8Array(await readFile(join(site, path))));
  return {
    name: 'node',
    async ask(q) {
      const cpu = process.cpuUsage();
      const t = performance.now();
      const answer = await source.stream(parseQuery(q), BASE);
      const parts = [];
      for await (const part of answer.body) parts.push(Buffer.from(part));
      const wall = performance.now() - t;
      const used = process.cpuUsage(cpu);
      return {
        status: answer.status,
        etag: answer.tag,
        body: Buffer.concat(parts),
        wall,
        cpu: (used.user + used.system) / 1000,
      };
    },
    stop: async () => undefined,
  };
}

console.log(`${count.toLocaleString('en')} cities; A = ${sites[0]}, B = ${sites[1]}; load ${load()}`);
for (const runtime of RUNTIMES) {
  const pair = [];
  for (const [i, site] of sites.entries())
    pair.push(
      await (runtime === 'workerd'
        ? workerdRuntime(site, i)
        : runtime === 'isolate'
          ? isolateRuntime(site, i)
          : nodeRuntime(site)),
    );
  try {
    console.log(
      `\n${runtime} (load ${load()}): CPU per answer median (p95), wall median (p95); A | B | B/A of CPU medians`,
    );
    const firsts = [];
    for (const r of pair) firsts.push(await r.ask(FIRST));
    console.log(
      `  first answer of a fresh instance (${FIRST}): ${firsts.map((f) => `${ms(f.cpu)} CPU, ${ms(f.wall)} wall`).join(' | ')}`,
    );
    for (const [kind, query, n] of kinds) {
      const got = [[], []];
      for (let k = 0; k < n; k++) {
        const order = k % 2 ? [1, 0] : [0, 1];
        const answers = [];
        for (const s of order) answers[s] = await pair[s].ask(query(k));
        const [a, b] = answers;
        // A computed answer's ETag names the data and query (W/"c…): the same on both sites. A covered
        // page's is the asset server's own, which differs between two deployments of the same file.
        const computed = (x) => x.etag?.startsWith('W/"c');
        const tagsDiffer = (computed(a) || computed(b)) && a.etag !== b.etag;
        if (a.status !== b.status || tagsDiffer || !a.body.equals(b.body))
          throw new Error(
            `${runtime} ?${query(k)}: the sites answer differently (${a.status} ${a.etag} vs ${b.status} ${b.etag})`,
          );
        answers.forEach((x, s) => got[s].push(x));
      }
      const cells = got.map((xs) => {
        const [cpu, wall] = [xs.map((x) => x.cpu), xs.map((x) => x.wall)];
        return `${ms(median(cpu))} (${ms(pct(cpu, 0.95))}), ${ms(median(wall))} (${ms(pct(wall, 0.95))})`;
      });
      const ratio = median(got[1].map((x) => x.cpu)) / median(got[0].map((x) => x.cpu));
      const bytes = median(got[0].map((x) => x.body.length));
      console.log(
        `  ${kind} [${n} answers of ${(bytes / 1000).toFixed(0)} KB]: ${cells.join(' | ')} | ${ratio.toFixed(2)}`,
      );
    }
  } finally {
    for (const r of pair) await r.stop();
  }
}
console.log(`\nload at the end ${load()}`);
