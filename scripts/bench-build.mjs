#!/usr/bin/env node
// npm run bench:build: builds the 140k-city benchmark dataset (npm run bench:data) with the
// default ordering, ±name_en and ±name_ar and page sizes 10 and 100, then in the same run:
//   - a baseline that only writes the same bytes (reads the built tree, writes it anew with
//     fs.promises and bounded concurrency): what the disk allows; prints build / baseline;
//   - a rebuild with no change (must write nothing; prints its time against the full build);
//   - a rebuild after editing one city's name_ar (prints how many files were written).
// Each step runs in its own process (peak RSS = that process's maxRSS, threads included), with
// `sync` before it so one step's dirty pages are not flushed on another's clock.
//
//   node scripts/bench-build.mjs [--data FILE] [--dir DIR] [--orderings LIST] [--page-sizes LIST] [--keep]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, 'bench-data', 'cities-140k.json') },
    dir: { type: 'string' },
    orderings: { type: 'string', default: 'default,name_en,-name_en,name_ar,-name_ar' },
    'page-sizes': { type: 'string', default: '10,100' },
    keep: { type: 'boolean', default: false },
  },
});

if (!existsSync(opts.data)) {
  console.error(`${opts.data} is missing: deriving it (npm run bench:data) ...`);
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'bench-data.mjs'), '--out', opts.data], { stdio: 'inherit' });
}
const work = opts.dir ?? mkdtempSync(join(tmpdir(), 'cities-bench-build-'));
const site = join(work, 'site');
const copy = join(work, 'copy');
const edited = join(work, 'edited.json');
const datasetBytes = statSync(opts.data).size;

/** Runs `code` (an ES module body) in a fresh node process; resolves with its JSON result and peak RSS. */
function runStep(code) {
  execFileSync('sync');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (status) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (status !== 0) reject(new Error(`step failed (${status}): ${out}`));
      else resolve(JSON.parse(last));
    });
  });
}

const report = `const rss = () => process.resourceUsage().maxRSS * 1024;`;

function build(data) {
  return runStep(`${report}
    import { build } from './lib/index.js';
    const started = performance.now();
    const r = await build({ data: ${JSON.stringify(data)}, out: ${JSON.stringify(site)}, baseUrl: 'http://localhost:8080',
      collation: 'locale', pageSizes: ${JSON.stringify(opts['page-sizes'].split(',').map(Number))},
      orderings: ${JSON.stringify(opts.orderings.split(','))} });
    console.log(JSON.stringify({ ...r, seconds: (performance.now() - started) / 1000, rss: rss() }));`);
}

// The baseline: the built tree's files read and written anew, 48 at a time, as fast as fs.promises goes.
const baseline = () =>
  runStep(`${report}
    import fg from 'fast-glob';
    import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
    import { dirname, join } from 'node:path';
    const src = ${JSON.stringify(site)}, dst = ${JSON.stringify(copy)};
    await rm(dst, { recursive: true, force: true });
    const started = performance.now();
    const files = await fg('**/*', { cwd: src, dot: true });
    for (const dir of new Set(files.map((f) => dirname(join(dst, f))))) await mkdir(dir, { recursive: true });
    let next = 0, bytes = 0;
    const worker = async () => { while (next < files.length) { const f = files[next++]; const b = await readFile(join(src, f)); bytes += b.length; await writeFile(join(dst, f), b); } };
    await Promise.all(Array.from({ length: 48 }, worker));
    console.log(JSON.stringify({ files: files.length, bytes, seconds: (performance.now() - started) / 1000, rss: rss() }));`);

/** The dataset with one city's name_ar changed (a city in the middle, given a real Arabic name). */
function editOneCity() {
  const cities = JSON.parse(readFileSync(opts.data, 'utf8'));
  const city = cities[Math.floor(cities.length / 2)];
  const before = city.name_ar;
  city.name_ar = `مدينة ${city.name_en}`;
  writeFileSync(edited, `${JSON.stringify(cities)}\n`);
  return { id: city.id, before, after: city.name_ar };
}

const mb = (bytes) => bytes / 1e6;
const fmt = (n, digits = 1) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const row = (label, r) => console.log(`${label.padEnd(26)} ${fmt(r.seconds, 2).padStart(8)} s  ${r.written ?? r.files} files  peak RSS ${fmt(mb(r.rss), 0)} MB`);

try {
  rmSync(site, { recursive: true, force: true });
  console.log(`dataset ${opts.data}: ${fmt(mb(datasetBytes))} MB of JSON; orderings ${opts.orderings}; page sizes ${opts['page-sizes']}; in ${work}`);
  const full = await build(opts.data);
  row('full build', full);
  const base = await baseline();
  row('baseline (read + rewrite)', base);
  const again = await build(opts.data);
  row('rebuild, no change', again);
  const edit = editOneCity();
  const after = await build(edited);
  row(`rebuild, 1 name_ar edited`, after);

  const checks = [
    ['build / baseline time', full.seconds / base.seconds, 1.5],
    ['no-change rebuild / build', again.seconds / full.seconds, 0.1],
    ['build peak RSS / dataset JSON', full.rss / datasetBytes, 3],
  ];
  console.log('');
  console.log(`full build: ${full.files} files, ${fmt(mb(base.bytes))} MB, ${fmt(full.seconds, 2)} s, ${fmt(full.files / full.seconds, 0)} files/s, ${fmt(mb(base.bytes) / full.seconds)} MB/s, peak RSS ${fmt(mb(full.rss), 0)} MB`);
  console.log(`baseline:   ${base.files} files, ${fmt(mb(base.bytes))} MB, ${fmt(base.seconds, 2)} s, ${fmt(base.files / base.seconds, 0)} files/s, ${fmt(mb(base.bytes) / base.seconds)} MB/s, peak RSS ${fmt(mb(base.rss), 0)} MB`);
  console.log(`no-change rebuild: ${again.written} written, ${again.unchanged} unchanged, ${again.removed} removed in ${fmt(again.seconds, 2)} s`);
  console.log(`one name_ar edited (id ${edit.id}: ${JSON.stringify(edit.before)} -> ${JSON.stringify(edit.after)}): ${after.written} files written (pages whose bytes changed, with their .gz/.br, the dataset copy and the manifest), ${after.unchanged} unchanged, ${after.removed} removed in ${fmt(after.seconds, 2)} s`);
  console.log('');
  for (const [label, value, target] of checks) console.log(`${label.padEnd(30)} ${fmt(value, 2).padStart(6)}  (target <= ${target}) ${value <= target ? 'ok' : 'MISSED'}`);
  if (again.written !== 0) console.log(`no-change rebuild wrote ${again.written} files: MISSED (must be 0)`);
} finally {
  rmSync(copy, { recursive: true, force: true });
  if (!opts.keep && !opts.dir) rmSync(work, { recursive: true, force: true });
}
