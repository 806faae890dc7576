#!/usr/bin/env node
// npm run bench:edge: the project `cities-api edge cloudflare` generates for a site of 140k cities,
// answering live queries on workerd, Cloudflare's runtime (miniflare, with the generated
// wrangler.jsonc's script and assets): the Worker reads the site's edge data (rank files and
// chunks, site/edge-files.ts) through the ASSETS binding, as a deployed Worker reads them. For each query, on a
// fresh isolate: the time to its first answer, then the wall time of each further request (distinct
// pages, so chunk reads are not all cache hits), and the isolate's memory as its inspector reports
// it (V8 heap + embedder heap + ArrayBuffer backing stores: the most seen after any answer, and after
// a garbage collection at the end), beside the workerd process's RSS. A Worker's CPU time cannot be read from inside
// (its clock stands still while it computes); wall time seen from outside bounds it, and the same
// code's CPU time per request in Node (same V8) is printed beside it. Bodies are checked against
// answerListing over the whole dataset. Goals (issue 12): first answer < 1 s, < 10 ms of CPU per
// answer, memory < 128 MB.
//
//   node scripts/bench-edge.mjs [--data FILE] [--requests N]
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, 'bench-data', 'cities-140k.json') },
    requests: { type: 'string', default: '40' },
  },
});
const BASE = 'https://api.example.org';
const INSPECTOR = 9357;
const QUERIES = [
  [
    'deep live page',
    'ordering=-name_ar&page_size=7&page=15000',
    (i) => `ordering=-name_ar&page_size=7&page=${15000 - i}`,
  ],
  ['multi-field ordering', 'ordering=name_en,-name_ar', (i) => `ordering=name_en,-name_ar&page=${i + 2}`],
  [
    'multi-field, deep',
    'ordering=name_en,-name_ar&page=9000',
    (i) => `ordering=name_en,-name_ar&page=${9000 - 97 * i}`,
  ],
];

const lib = (path) => import(join(ROOT, 'lib', path));
const { Miniflare } = await import('miniflare').catch(() =>
  fail('miniflare is missing: npm ci installs it (a dev dependency)'),
);
const [
  { readDataset },
  { CityIndex },
  { answerListing, bodyBytes },
  { parseQuery },
  { EdgeSource },
  { build },
  { writeEdgeProject },
  { ROUTES },
] = await Promise.all(
  [
    'dataset/read-dataset.js',
    'core/city-index.js',
    'core/page.js',
    'core/query-string.js',
    'site/edge-source.js',
    'app/build.js',
    'app/edge-project.js',
    'core/route-table.js',
  ].map(lib),
);

if (!existsSync(opts.data)) {
  console.error(`${opts.data} is missing: deriving it (npm run bench:data) ...`);
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'bench-data.mjs'), '--out', opts.data], { stdio: 'inherit' });
}

// 1. The build: the dataset ranked by ICU (locale collation), its edge files written with the site
// (few pages: one ordering, one page size, so that every query below is the Worker's to compute).
const work = join(ROOT, 'bench-data', 'edge-bench');
rmSync(work, { recursive: true, force: true });
let started = performance.now();
const site = join(work, 'site');
await build({ data: opts.data, out: site, baseUrl: BASE, pageSizes: [100], orderings: ['default'], compress: false });
const edgeDir = join(site, ROUTES.edge.dir);
const files = readdirSync(edgeDir, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile())
  .map((e) => ({ path: join(e.parentPath, e.name), bytes: statSync(join(e.parentPath, e.name)).size }));
const bytes = files.reduce((n, f) => n + f.bytes, 0);
const largest = (part) => Math.max(...files.filter((f) => f.path.includes(part)).map((f) => f.bytes));
console.log(
  `site of the dataset built in ${secs(performance.now() - started)}; edge data: ${files.length} files, ${mb(bytes)} (largest rank file ${mb(largest('ranks'))}, largest chunk ${mb(largest('chunks'))})`,
);
started = performance.now();
const index = new CityIndex(await readDataset(opts.data), 'locale');
console.log(`the whole dataset ranked in Node, for the expected answers: ${secs(performance.now() - started)}`);

// 2. The project \`cities-api edge cloudflare\` writes for it: its worker.js, as wrangler deploys it.
const project = await writeEdgeProject('cloudflare', site, join(work, 'project'));
const code = project.files
  .filter((f) => f.endsWith('.js'))
  .map((f) => readFileSync(join(project.out, f)).length)
  .reduce((a, b) => a + b, 0);
console.log(
  `generated Cloudflare project: ${project.files.join(', ')}; its code ${(code / 1e3).toFixed(1)} KB (bundle ${(project.bundleBytes / 1e3).toFixed(1)} KB), the same at any size of site`,
);

// 3. Each query on a fresh isolate, on workerd.
console.log(`\nworkerd (miniflare), ${opts.requests} requests after the first, distinct pages:`);

const expected = (query) => bodyBytes(answerListing(index, parseQuery(query), BASE).body);
for (const [label, first, next] of QUERIES) {
  // Timed without the inspector (attached, it slows workerd down); memory on a second fresh isolate.
  const timed = await onWorkerd(first, next, false);
  const measured = await onWorkerd(first, next, true);
  const q = (p) => timed.walls[Math.min(timed.walls.length - 1, Math.floor(p * timed.walls.length))];
  console.log(`${label}: ?${first}`);
  console.log(
    `  first answer ${ms(timed.first)}; each next: median ${ms(q(0.5))}, p95 ${ms(q(0.95))}, max ${ms(timed.walls.at(-1))} (wall)`,
  );
  console.log(
    `  isolate memory (V8 heap + embedder + ArrayBuffers): at most ${mb(measured.isolatePeak)} after an answer; workerd process RSS ${mb(timed.before.rss)} -> ${mb(timed.after.rss)} (peak ${mb(timed.after.peak)})`,
  );
}

/** The query, then `requests` next ones, on a fresh workerd; with the inspector, the isolate's memory after each. */
async function onWorkerd(first, next, inspect) {
  const config = JSON.parse(readFileSync(join(project.out, 'wrangler.jsonc'), 'utf8').replace(/^\/\/.*\n/, ''));
  const mf = new Miniflare({
    modules: true,
    modulesRoot: project.out,
    // The project's .js files are ES modules (as wrangler bundles them); miniflare's default takes .js as CommonJS.
    modulesRules: [{ type: 'ESModule', include: ['**/*.js'] }],
    scriptPath: join(project.out, config.main),
    compatibilityDate: config.compatibility_date,
    ...(inspect ? { inspectorPort: INSPECTOR } : {}),
    assets: {
      directory: join(project.out, config.assets.directory),
      binding: config.assets.binding,
      routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
    },
  });
  await mf.ready;
  const pid = workerdPid();
  const before = rss(pid);
  const inspector = inspect ? await inspectorOf(INSPECTOR) : null;
  let isolatePeak = 0;
  const ask = async (query) => {
    const started = performance.now();
    const answer = await mf.dispatchFetch(`${BASE}/cities/?${query}`);
    const body = Buffer.from(await answer.arrayBuffer());
    const wall = performance.now() - started;
    if (answer.status !== 200 || !body.equals(expected(query)))
      throw new Error(`?${query}: ${answer.status} ${body.toString().slice(0, 200)}`);
    if (inspector) isolatePeak = Math.max(isolatePeak, await inspector.memory());
    return wall;
  };
  const firstWall = await ask(first);
  const walls = [];
  for (let i = 0; i < Number(opts.requests); i++) walls.push(await ask(next(i)));
  const after = rss(pid);
  inspector?.close();
  await mf.dispose();
  return { first: firstWall, walls: walls.sort((a, b) => a - b), before, after, isolatePeak };
}

// 4. The same source in Node: CPU time per answer (same V8), files read from disk.
console.log(`\nNode (same code, same V8), CPU time per answer (process.cpuUsage), a fresh source per query:`);
for (const [label, first, next] of QUERIES) {
  const source = new EdgeSource(async (path) => new Uint8Array(readFileSync(join(site, path))));
  const cpu = async (query) => {
    const at = process.cpuUsage();
    bodyBytes((await source.answer(parseQuery(query), BASE)).body);
    const used = process.cpuUsage(at);
    return (used.user + used.system) / 1000;
  };
  const firstCpu = await cpu(first);
  const cpus = [];
  for (let i = 0; i < Number(opts.requests); i++) cpus.push(await cpu(next(i)));
  cpus.sort((a, b) => a - b);
  console.log(
    `${`${label}:`.padEnd(24)} first ${ms(firstCpu)}, then median ${ms(cpus[cpus.length >> 1])}, max ${ms(cpus.at(-1))}`,
  );
}
rmSync(work, { recursive: true, force: true });

/** The user Worker's isolate through workerd's inspector (Chrome DevTools protocol). */
async function inspectorOf(port) {
  const { default: WebSocket } = await import('ws');
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const target = targets.find((t) => t.webSocketDebuggerUrl.endsWith('/core:user:'));
  if (!target)
    throw new Error(`no user Worker among the inspector's targets: ${targets.map((t) => t.title).join(', ')}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let id = 0;
  const pending = new Map();
  ws.on('message', (data) => {
    const message = JSON.parse(data);
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  });
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  const memory = async () => {
    const usage = await call('Runtime.getHeapUsage');
    return usage.usedSize + usage.embedderHeapUsedSize + usage.backingStorageSize;
  };
  return {
    call,
    memory,
    close: () => ws.close(),
  };
}

function workerdPid() {
  const out = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  const line = out.split('\n').find((l) => /workerd/.test(l));
  return line ? Number(line.trim().split(/\s+/)[0]) : null;
}

function rss(pid) {
  if (!pid) return { rss: NaN, peak: NaN };
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

function fail(message) {
  console.error(`bench:edge: ${message}`);
  process.exit(2);
}

function mb(n) {
  return Number.isNaN(n) ? '?' : `${(n / 1e6).toFixed(1)} MB`;
}
function ms(n) {
  return `${n.toFixed(n < 10 ? 2 : 0)} ms`;
}
function secs(n) {
  return `${(n / 1000).toFixed(1)} s`;
}
