#!/usr/bin/env node
// npm run bench:orderings: what a new multi-field ordering (`?ordering=name_fr,-name_de,...`)
// costs at scale, and what a few clients sending them do to everyone else.
//   1. in process, for orderings it has not seen (after every field's ranks exist, as on a server
//      that has answered each field once): the time CityIndex takes for a page of 10 (what a
//      request costs; before CityIndex.positions existed, order() was what a request cost) and
//      for the whole order (what a page inside thousands of ties on the first term costs);
//   2. against `cities-api serve` (a child process, on a site with only the default ordering
//      precomputed): latency of a precomputed page alone, then while --connections clients
//      each send new multi-field orderings back to back. Prints the ratio of the two medians.
//
//   node scripts/bench-orderings.mjs [--data FILE] [--orderings N] [--duration SECONDS] [--connections N]
// The dataset defaults to the 140k-city benchmark set (npm run bench:data derives it).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, 'bench-data', 'cities-140k.json') },
    orderings: { type: 'string', default: '200' },
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '4' },
    static: { type: 'string', default: 'page=2' },
  },
});
const lib = await import(join(ROOT, 'lib', 'index.js'));

if (!existsSync(opts.data)) {
  console.error(`${opts.data} is missing: deriving it (npm run bench:data) ...`);
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'bench-data.mjs'), '--out', opts.data], { stdio: 'inherit' });
}

/** Deterministic pseudo-random multi-field orderings (2 to 4 distinct fields, either direction), each new. */
function* newOrderings(seed) {
  let x = seed;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const seen = new Set();
  for (;;) {
    const fields = [...lib.NAME_FIELDS];
    const terms = [];
    const n = 2 + Math.floor(next() * 3);
    for (let i = 0; i < n; i++) {
      const [field] = fields.splice(Math.floor(next() * fields.length), 1);
      terms.push(next() < 0.5 ? `-${field}` : field);
    }
    const text = terms.join(',');
    if (!seen.has(text)) {
      seen.add(text);
      yield text;
    }
  }
}

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x) => `${x.toFixed(2)} ms`;

// 1. In process.
const table = await lib.readDataset(opts.data);
const index = new lib.CityIndex(table, 'locale');
const started = performance.now();
for (const field of lib.NAME_FIELDS) index.order(lib.parseOrdering(field));
const rankMs = performance.now() - started;
/** Milliseconds `run` takes for each of --orderings new orderings. */
function costs(seed, run) {
  const times = [];
  const orderings = newOrderings(seed);
  for (let i = 0; i < Number(opts.orderings); i++) {
    const ordering = lib.parseOrdering(orderings.next().value);
    const t = performance.now();
    run(ordering, (i * 7919) % (table.count - 10));
    times.push(performance.now() - t);
  }
  return `median ${ms(percentile(times, 0.5))}, p99 ${ms(percentile(times, 0.99))}, max ${ms(Math.max(...times))}`;
}
console.log(`${table.count} cities, locale collation (${opts.data})`);
console.log(`16 fields ranked and sorted once: ${ms(rankMs)} in all`);
const page = index.positions
  ? costs(1, (ordering, start) => index.positions(ordering, start, start + 10))
  : 'n/a (no CityIndex.positions)';
console.log(`new multi-field ordering, ${opts.orderings} of them, a page of 10: ${page}`);
console.log(
  `new multi-field ordering, ${opts.orderings} of them, the whole order: ${costs(2, (ordering) => index.order(ordering))}`,
);

// 2. Against the server.
const dir = mkdtempSync(join(tmpdir(), 'cities-bench-orderings-'));
const child = spawn(
  process.execPath,
  [
    join(ROOT, 'bin/cities-api.js'),
    'serve',
    join(dir, 'site'),
    '--data',
    opts.data,
    '--port',
    '0',
    '--orderings',
    'default',
    '--page-sizes',
    '10',
    '--quiet',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
try {
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const get = (path) =>
    new Promise((resolve, reject) => {
      const t = performance.now();
      request(`${url}${path}`, { agent }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve(performance.now() - t) : reject(new Error(`${path}: ${res.statusCode}`)),
        );
      })
        .on('error', reject)
        .end();
    });
  for (const field of lib.NAME_FIELDS) await get(`/cities/?ordering=${field}`); // every field ranked, as in part 1
  const staticPath = `/cities/?${opts.static}`;
  const sample = async (until) => {
    const times = [];
    while (performance.now() < until) times.push(await get(staticPath));
    return times;
  };
  const duration = Number(opts.duration) * 1000;
  const idle = await sample(performance.now() + duration);
  let stop = false;
  let sent = 0;
  const busy = await Promise.allSettled(
    Array.from({ length: Number(opts.connections) }, async (_, i) => {
      const mine = newOrderings(1000 + i);
      for (let n = 0; !stop; n++) {
        await get(`/cities/?ordering=${mine.next().value}&page_size=10&page=${1 + ((n * 7919 + i * 104729) % 13000)}`);
        sent++;
      }
    }).concat([
      sample(performance.now() + duration).then((times) => {
        stop = true;
        return times;
      }),
    ]),
  );
  const failed = busy.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const loaded = busy.at(-1).value;
  agent.destroy();
  const line = (label, times) =>
    `${label.padEnd(58)} median ${ms(percentile(times, 0.5)).padStart(9)}   p99 ${ms(percentile(times, 0.99)).padStart(9)}   (${times.length} requests)`;
  console.log(`\nserve, precomputed page ?${opts.static}, one client, ${opts.duration} s each`);
  console.log(line('alone', idle));
  console.log(line(`while ${opts.connections} connections send new orderings`, loaded));
  console.log(`new orderings answered meanwhile: ${sent} (${(sent / Number(opts.duration)).toFixed(0)}/s)`);
  console.log(`static median, loaded / alone: ${(percentile(loaded, 0.5) / percentile(idle, 0.5)).toFixed(1)}x`);
} finally {
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
