#!/usr/bin/env node
// A static page's latency on `serve --watch` (not writable) while a city is appended to the
// dataset's write-ahead log (as a writable server of another site would): the reader folds the
// log into a staged copy and rebuilds; its answers must not wait meanwhile (issue #26).
//   node scripts/bench-watch-log.mjs [--data bench-data/cities-140k.json] [--work DIR] [--changes 2] [--root CHECKOUT]
// Builds a minimal site (--orderings default --page-sizes 100 --compression none) first, then
// polls a precomputed page every 5 ms, from the append until the server says it rebuilt.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: resolve(import.meta.dirname, '..') },
    data: { type: 'string', default: resolve(import.meta.dirname, '../bench-data/cities-140k.json') },
    work: { type: 'string', default: '/tmp/bench-watch-log' },
    changes: { type: 'string', default: '2' },
  },
});
// --root: another checkout's bin/ and lib/ (its code before a change), this script unchanged.
const ROOT = resolve(values.root);
const { CityLog } = await import(join(ROOT, 'lib/dataset/city-log.js'));
const CLI = join(ROOT, 'bin/cities-api.js');

rmSync(values.work, { recursive: true, force: true });
mkdirSync(values.work, { recursive: true });
const data = join(values.work, 'cities.json');
copyFileSync(values.data, data);
const site = join(values.work, 'site');
const SITE = ['--orderings', 'default', '--page-sizes', '100', '--collation', 'codepoint'];
let t = performance.now();
const built = spawnSync(process.execPath, [
  CLI,
  'build',
  '--data',
  data,
  '--out',
  site,
  ...SITE,
  '--compression',
  'none',
]);
if (built.status !== 0) throw new Error(`build failed: ${built.stderr}`);
console.log(`built ${values.data} in ${((performance.now() - t) / 1000).toFixed(1)} s`);

const cities = JSON.parse(readFileSync(data, 'utf8'));
let lastId = cities.reduce((max, city) => Math.max(max, city.id), 0);
const model = cities[0];
cities.length = 0;

const child = spawn(process.execPath, [CLI, 'serve', site, '--data', data, '--watch', '--port', '0', '--quiet'], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
let output = '';
const waiters = [];
const onText = (chunk) => {
  output += chunk;
  for (const w of [...waiters]) if (w.re.test(output.slice(w.from))) waiters.splice(waiters.indexOf(w), 1) && w.done();
};
child.stdout.on('data', onText);
child.stderr.on('data', onText);
const printed = (re, from = output.length) =>
  new Promise((done) => (re.test(output.slice(from)) ? done() : waiters.push({ re, from, done })));
await printed(/ at http:\/\//);
const url = `${output.match(/ at (http:\/\/[^/\s]+)/)[1]}/cities/?page_size=100&page=2`;
console.log(`serving at ${url}`);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Latencies (ms) of GET url every 5 ms until `until` settles (plus 200 ms); `early`: those of the first EARLY_MS. */
const EARLY_MS = 5000;
async function poll(until) {
  const times = [];
  const early = [];
  const from = performance.now();
  let stop = false;
  until.then(() => sleep(200)).then(() => (stop = true));
  while (!stop) {
    const start = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`status ${response.status}`);
    times.push(performance.now() - start);
    if (start - from < EARLY_MS) early.push(performance.now() - start);
    await sleep(5);
  }
  return Object.assign(times, { early });
}
const figures = (times) => {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
  return `n=${times.length} p50=${at(0.5)} p99=${at(0.99)} max=${sorted.at(-1).toFixed(1)} ms`;
};

console.log(`quiet: ${figures(await poll(sleep(2000)))}`);
const log = CityLog.of(realpathSync(data));
for (let i = 0; i < Number(values.changes); i++) {
  const from = output.length;
  const rebuilt = printed(/changed: rebuilt|changed but was not used/, from);
  t = performance.now();
  await log.append([{ ...model, id: ++lastId, name_en: `Logged ${lastId}` }]);
  const times = await poll(rebuilt);
  const took = ((performance.now() - t) / 1000).toFixed(1);
  console.log(
    `log change ${i + 1}: rebuilt after ${took} s; first ${EARLY_MS / 1000} s: ${figures(times.early)}; all: ${figures(times)}`,
  );
}
child.kill();
