#!/usr/bin/env node
// npm run bench:build: what a build costs against what the disk allows, on two shapes (each made
// by npm run bench:data if missing):
//   wide: 3,000 cities (the 48 bundled ones repeated: real names in every language), all 33
//         orderings, page sizes 10,20,50,100 (~84,000 files): many small files. Goals: build <=
//         1.5x a raw writer of the same bytes; a rebuild with no change <= 0.1x the build.
//   deep: 140,000 cities (GeoNames), 5 orderings, page sizes 10,100: a large dataset. Goal:
//         the build's peak RSS <= 3x the dataset's JSON.
// Per shape, in one run: `--rounds` times (default 2) a full build then the raw writer, each in
// its own process after `sync`; then `--rebuilds` times (default 3) a rebuild with no change (the
// ratio uses their median), and one after editing a city.
// The raw writer writes the very files the build left (read beforehand, untimed, in batches of
// 256 MB) with fs.promises, 48 at a time, its directories made first: nothing but the writing.
// Ratios use the fastest round of each (the machine is shared: the others add only noise); each
// round's own ratio is printed too. The build's time is split into its phases (reading and
// indexing the dataset, writing the files, finishing: manifest, swap, stat cache) and its CPU
// into user and system time (all threads). --profile DIR adds --cpu-prof to the first build
// (the writer threads inherit it) and to a no-change rebuild of its tree, and prints each
// thread's top functions.
//
//   node scripts/bench-build.mjs [--shape wide|deep|both] [--rounds N] [--rebuilds N] [--data FILE] [--orderings LIST] [--page-sizes LIST] [--dir DIR] [--profile DIR] [--keep]
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    shape: { type: 'string', default: 'both' },
    rounds: { type: 'string', default: '2' },
    rebuilds: { type: 'string', default: '3' },
    data: { type: 'string' },
    orderings: { type: 'string' },
    'page-sizes': { type: 'string' },
    dir: { type: 'string' },
    profile: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const SHAPES = {
  wide: {
    data: join(ROOT, 'bench-data', 'cities-3k.json'),
    make: ['--bundled', '3000'],
    orderings: 'all',
    pageSizes: '10,20,50,100',
    goals: { time: 1.5, rebuild: 0.1 },
  },
  deep: {
    data: join(ROOT, 'bench-data', 'cities-140k.json'),
    make: [],
    orderings: 'default,name_en,-name_en,name_ar,-name_ar',
    pageSizes: '10,100',
    goals: { rss: 3 },
  },
};
if (opts.shape !== 'both' && !SHAPES[opts.shape]) throw new Error(`--shape: wide, deep or both, not ${opts.shape}`);
const rounds = Math.max(1, Number(opts.rounds));
const rebuilds = Math.max(1, Number(opts.rebuilds));

/** Runs `code` (an ES module body) in a fresh node process after `sync`; resolves with its last line's JSON. */
function runStep(code, execArgv = []) {
  execFileSync('sync');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...execArgv, '--input-type=module', '-e', code], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (status) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (status !== 0) reject(new Error(`step failed (${status}): ${out}`));
      else resolve(JSON.parse(last));
    });
  });
}

// Peak RSS is the process's maxRSS (threads included); CPU is process.cpuUsage (all threads).
const report = `const rss = () => process.resourceUsage().maxRSS * 1024; const cpu0 = process.cpuUsage();
  const cpu = () => { const c = process.cpuUsage(cpu0); return { user: c.user / 1e6, sys: c.system / 1e6 }; };`;

function build(shape, data, site, execArgv) {
  return runStep(
    `${report}
    import { build } from './lib/index.js';
    const started = performance.now();
    const at = () => (performance.now() - started) / 1000;
    let planned = 0, written = 0;
    const r = await build({ data: ${JSON.stringify(data)}, out: ${JSON.stringify(site)}, baseUrl: 'http://localhost:8080',
      collation: 'locale', pageSizes: ${JSON.stringify(shape.pageSizes.split(',').map(Number))}, orderings: ${JSON.stringify(shape.orderings.split(','))},
      onStart: () => (planned = at()), onProgress: (done, pages) => { if (done === pages) written = at(); } });
    const seconds = at();
    written ||= seconds;
    console.log(JSON.stringify({ ...r, check: undefined, kept: undefined, seconds, phases: { read: planned, write: written - planned, finish: seconds - written }, cpu: cpu(), rss: rss() }));`,
    execArgv,
  );
}

// The raw writer: the built tree's files read beforehand (untimed, 256 MB at a time), then written anew.
const rawWriter = (site, copy) =>
  runStep(`${report}
    import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
    import { dirname, join, relative } from 'node:path';
    const src = ${JSON.stringify(site)}, dst = ${JSON.stringify(copy)};
    const files = (await readdir(src, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => relative(src, join(entry.parentPath ?? entry.path, entry.name)));
    let seconds = 0, bytes = 0, user = 0, sys = 0;
    const timed = async (work) => { const t = performance.now(), c = process.cpuUsage(); await work(); const d = process.cpuUsage(c); seconds += (performance.now() - t) / 1000; user += d.user / 1e6; sys += d.system / 1e6; };
    await timed(async () => { for (const dir of new Set(files.map((f) => dirname(join(dst, f))))) await mkdir(dir, { recursive: true }); });
    for (let start = 0; start < files.length; ) {
      const batch = [];
      for (let size = 0; start < files.length && size < 256e6; start++) { const b = await readFile(join(src, files[start])); batch.push([files[start], b]); size += b.length; bytes += b.length; }
      let next = 0;
      await timed(() => Promise.all(Array.from({ length: 48 }, async () => { while (next < batch.length) { const [f, b] = batch[next++]; await writeFile(join(dst, f), b, { flag: 'wx' }); } })));
    }
    console.log(JSON.stringify({ files: files.length, bytes, seconds, cpu: { user, sys }, rss: rss() }));`);

/** The dataset with one city's name_ar changed (a city in the middle, given a real Arabic name). */
function editOneCity(data, edited) {
  const cities = JSON.parse(readFileSync(data, 'utf8'));
  const city = cities[Math.floor(cities.length / 2)];
  const before = city.name_ar;
  city.name_ar = `مدينة ${city.name_en}`;
  writeFileSync(edited, `${JSON.stringify(cities)}\n`);
  return { id: city.id, before, after: city.name_ar };
}

/** Each thread's profile: its busiest functions by self time. */
function printProfiles(dir) {
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()) {
    const { nodes, samples, timeDeltas } = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const self = new Map();
    let total = 0;
    samples.forEach((id, i) => {
      const { functionName, url, lineNumber } = byId.get(id).callFrame;
      const key = `${functionName || '(anonymous)'} ${url ? `${url.split('/').slice(-2).join('/')}:${lineNumber + 1}` : ''}`;
      self.set(key, (self.get(key) ?? 0) + timeDeltas[i]);
      total += timeDeltas[i];
    });
    console.log(`  ${file}: ${fmt(total / 1e6, 2)} s`);
    for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 8))
      console.log(`    ${fmt((100 * us) / total).padStart(5)}%  ${key}`);
  }
}

const mb = (bytes) => bytes / 1e6;
/** The run of median time (the lower middle one of an even count). */
const median = (runs) => [...runs].sort((a, b) => a.seconds - b.seconds)[(runs.length - 1) >> 1];
const fmt = (n, digits = 1) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const cpuText = (r) => `CPU user ${fmt(r.cpu.user)} s sys ${fmt(r.cpu.sys)} s`;
const row = (label, r) =>
  console.log(
    `  ${label.padEnd(28)} ${fmt(r.seconds, 2).padStart(7)} s  ${String(r.written ?? r.files).padStart(6)} files  ${cpuText(r)}  peak RSS ${fmt(mb(r.rss), 0)} MB`,
  );
const check = (label, value, target) =>
  console.log(
    `  ${label.padEnd(34)} ${fmt(value, 2).padStart(6)}  ${target === undefined ? '(no goal on this shape)' : `(target <= ${target}) ${value <= target ? 'ok' : 'MISSED'}`}`,
  );

async function benchShape(name) {
  const shape = {
    ...SHAPES[name],
    ...(opts.data && { data: opts.data }),
    ...(opts.orderings && { orderings: opts.orderings }),
    ...(opts['page-sizes'] && { pageSizes: opts['page-sizes'] }),
  };
  if (!existsSync(shape.data)) {
    console.error(`${shape.data} is missing: deriving it (npm run bench:data) ...`);
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'bench-data.mjs'), ...shape.make, '--out', shape.data], {
      stdio: 'inherit',
    });
  }
  const work = opts.dir ? join(opts.dir, name) : mkdtempSync(join(tmpdir(), `cities-bench-build-${name}-`));
  mkdirSync(work, { recursive: true });
  const edited = join(work, 'edited.json');
  // Each build and raw writer writes a tree of its own, and every tree is deleted at the end only:
  // on ext4 without a journal (this machine's) creating files within a minute or more of
  // deleting many costs several times as much (inode allocation skips recently deleted inodes,
  // reading each: recently_deleted() in perf), which a step must not inflict on the next.
  const trees = [];
  const tree = (label) => (trees.push(join(work, label)), join(work, label));
  let site;
  const datasetBytes = statSync(shape.data).size;
  try {
    console.log(
      `\n${name}: ${shape.data}: ${fmt(mb(datasetBytes))} MB of JSON; orderings ${shape.orderings}; page sizes ${shape.pageSizes}; in ${work}`,
    );
    const builds = [],
      raws = [];
    const fullBuild = async (label, execArgv) => {
      site = tree(`site-${trees.length}`);
      const full = await build(shape, shape.data, site, execArgv);
      row(label, full);
      const { read, write, finish } = full.phases;
      console.log(`    phases: read + index ${fmt(read, 2)} s, write ${fmt(write, 2)} s, finish ${fmt(finish, 2)} s`);
      return full;
    };
    for (let round = 1; round <= rounds; round++) {
      const full = await fullBuild(`round ${round}: full build`);
      const raw = await rawWriter(site, tree(`copy-${trees.length}`));
      row(`round ${round}: raw writer`, raw);
      console.log(`    this round: build / raw writer ${fmt(full.seconds / raw.seconds, 2)}`);
      builds.push(full);
      raws.push(raw);
    }
    const agains = [];
    for (let n = 1; n <= rebuilds; n++) {
      agains.push(await build(shape, shape.data, site));
      row(rebuilds > 1 ? `rebuild ${n}, no change` : 'rebuild, no change', agains.at(-1));
    }
    const again = median(agains);
    const edit = editOneCity(shape.data, edited);
    const after = await build(shape, edited, site);
    row('rebuild, 1 name_ar edited', after);
    const best = (runs) => runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    const full = best(builds);
    const raw = best(raws);
    console.log(
      `  fastest build: ${full.files} files, ${fmt(mb(raw.bytes))} MB, ${fmt(full.seconds, 2)} s, ${fmt(mb(raw.bytes) / full.seconds)} MB/s; fastest raw writer ${fmt(raw.seconds, 2)} s, ${fmt(mb(raw.bytes) / raw.seconds)} MB/s`,
    );
    console.log(
      `  one name_ar edited (id ${edit.id}): ${after.written} files written, ${after.unchanged} unchanged, ${after.removed} removed`,
    );
    check('build / raw writer (fastest each)', full.seconds / raw.seconds, shape.goals.time);
    check(
      `no-change rebuild${rebuilds > 1 ? ' (median)' : ''} / build`,
      again.seconds / full.seconds,
      shape.goals.rebuild,
    );
    check('build peak RSS / dataset JSON', Math.max(...builds.map((b) => b.rss)) / datasetBytes, shape.goals.rss);
    for (const r of agains)
      if (r.written !== 0) console.log(`  no-change rebuild wrote ${r.written} files: MISSED (must be 0)`);
    if (opts.profile) {
      const dir = join(opts.profile, name);
      rmSync(dir, { recursive: true, force: true });
      // The profiled build writes a tree of its own too (see `trees`).
      await fullBuild('full build, profiled', ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      printProfiles(dir);
      // The no-change rebuild of that tree, profiled too (its check's helper thread inherits the flag).
      row(
        'rebuild, no change, profiled',
        await build(shape, shape.data, site, ['--cpu-prof', `--cpu-prof-dir=${dir}/rebuild`]),
      );
      printProfiles(`${dir}/rebuild`);
    }
  } finally {
    if (!opts.keep) for (const dir of trees) rmSync(dir, { recursive: true, force: true });
    if (!opts.keep && !opts.dir) rmSync(work, { recursive: true, force: true });
  }
}

for (const name of opts.shape === 'both' ? ['wide', 'deep'] : [opts.shape]) await benchShape(name);
