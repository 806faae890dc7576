#!/usr/bin/env node
// npm run bench:compression: what each --compression level costs and saves, on the bundled
// 48-city site (data/cities.csv) and on a 3,000-city site (every 45th city of the 140k-city
// benchmark dataset, npm run bench:data), both with every ordering and page sizes 10,20,50,100.
// Per site and level, each build in its own process after `sync`:
//   - the build's wall time, and its CPU time (threads included) less that of the `none` build:
//     the CPU the .gz/.br cost;
//   - the bytes of the pages, of their .gz and of their .br, each against the pages' bytes;
//   - a rebuild with no change (it must write nothing: the level is paid for once).
//
//   node scripts/bench-compression.mjs [--sites 48,3000] [--levels none,fast,best] [--orderings all] [--page-sizes 10,20,50,100] [--keep]
import { execFileSync } from 'node:child_process';
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
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    sites: { type: 'string', default: '48,3000' },
    levels: { type: 'string', default: 'none,fast,best' },
    orderings: { type: 'string', default: 'all' },
    'page-sizes': { type: 'string', default: '10,20,50,100' },
    keep: { type: 'boolean', default: false },
  },
});
const LARGE = join(ROOT, 'bench-data', 'cities-140k.json');

/** The dataset of a site of `count` cities: the bundled one for 48, else every n-th city of the 140k-city dataset. */
function dataset(count) {
  if (count === 48) return join(ROOT, 'data', 'cities.csv');
  const file = join(ROOT, 'bench-data', `cities-${count}.json`);
  if (existsSync(file)) return file;
  if (!existsSync(LARGE)) {
    console.error(`${LARGE} is missing: deriving it (npm run bench:data) ...`);
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'bench-data.mjs'), '--out', LARGE], { stdio: 'inherit' });
  }
  const cities = JSON.parse(readFileSync(LARGE, 'utf8'));
  if (count > cities.length) throw new Error(`--sites ${count}: the benchmark dataset has ${cities.length} cities`);
  const picked = Array.from({ length: count }, (_, i) => cities[Math.floor((i * cities.length) / count)]);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `[\n${picked.map((c) => JSON.stringify(c)).join(',\n')}\n]\n`);
  return file;
}

/** Builds `out` from `data` at `level` in a fresh process: its result, wall seconds and CPU seconds (all threads). */
function build(data, out, level) {
  execFileSync('sync');
  const code = `import { build } from './lib/index.js';
    const started = performance.now();
    const r = await build({ data: ${JSON.stringify(data)}, out: ${JSON.stringify(out)}, baseUrl: 'https://api.example.org',
      collation: 'locale', compression: ${JSON.stringify(level)}, pageSizes: ${JSON.stringify(opts['page-sizes'].split(',').map(Number))},
      orderings: ${JSON.stringify(opts.orderings === 'all' ? undefined : opts.orderings.split(','))} });
    const { userCPUTime, systemCPUTime } = process.resourceUsage();
    console.log(JSON.stringify({ written: r.written, files: r.files, seconds: (performance.now() - started) / 1000, cpu: (userCPUTime + systemCPUTime) / 1e6, sys: systemCPUTime / 1e6 }));`;
  const out_ = execFileSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out_.trim().split('\n').at(-1));
}

/** Bytes of the pages that have a .gz/.br (every page: the site's JSON answers), of their .gz and of their .br. */
function sizes(site) {
  const total = { pages: 0, gz: 0, br: 0, pageFiles: 0 };
  for (const entry of readdirSync(join(site, 'cities'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.json') || entry.name === 'not-precomputed.json') continue;
    const path = join(entry.parentPath, entry.name);
    total.pages += statSync(path).size;
    total.pageFiles++;
    if (existsSync(`${path}.gz`)) total.gz += statSync(`${path}.gz`).size;
    if (existsSync(`${path}.br`)) total.br += statSync(`${path}.br`).size;
  }
  return total;
}

const fmt = (n, digits = 1) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mb = (bytes) => `${fmt(bytes / 1e6)} MB`;
const ratio = (part, whole) => (part ? fmt(part / whole, 3) : '-');

const work = mkdtempSync(join(tmpdir(), 'cities-bench-compression-'));
const levels = opts.levels.split(',');
const summary = [];
try {
  console.log(`orderings ${opts.orderings}; page sizes ${opts['page-sizes']}; levels ${levels.join(', ')}; in ${work}`);
  for (const count of opts.sites.split(',').map(Number)) {
    const data = dataset(count);
    console.log(`\n${count} cities (${data}):`);
    console.log(
      `${'level'.padEnd(6)} ${'build s'.padStart(8)} ${'CPU s'.padStart(8)} ${'(sys)'.padStart(7)} ${'+CPU s'.padStart(8)} ${'pages'.padStart(10)} ${'.gz'.padStart(10)} ${'gz/page'.padStart(8)} ${'.br'.padStart(10)} ${'br/page'.padStart(8)}  rebuild, no change`,
    );
    let baseCpu;
    for (const level of levels) {
      const site = join(work, `site-${count}-${level}`);
      const full = build(data, site, level);
      const again = build(data, site, level);
      const s = sizes(site);
      baseCpu ??= level === 'none' ? full.cpu : undefined;
      const extra = baseCpu === undefined ? '-' : fmt(full.cpu - baseCpu, 2);
      summary.push({
        count,
        level,
        ...full,
        extraCpu: baseCpu === undefined ? null : full.cpu - baseCpu,
        ...s,
        rebuild: again,
      });
      console.log(
        `${level.padEnd(6)} ${fmt(full.seconds, 2).padStart(8)} ${fmt(full.cpu, 2).padStart(8)} ${fmt(full.sys, 2).padStart(7)} ${extra.padStart(8)} ${mb(s.pages).padStart(10)} ${(s.gz ? mb(s.gz) : '-').padStart(10)} ${ratio(s.gz, s.pages).padStart(8)} ${(s.br ? mb(s.br) : '-').padStart(10)} ${ratio(s.br, s.pages).padStart(8)}  ${fmt(again.seconds, 2)} s, ${again.written} written${again.written ? ' (MISSED: must be 0)' : ''}`,
      );
      if (!opts.keep) rmSync(site, { recursive: true, force: true });
    }
    const [fast, best] = ['fast', 'best'].map((level) => summary.find((r) => r.count === count && r.level === level));
    if (fast && best) {
      console.log(
        `best against fast: .br ${fmt((1 - best.br / fast.br) * 100)} % smaller, .gz ${fmt((1 - best.gz / fast.gz) * 100)} % smaller; build ${fmt(best.seconds / fast.seconds, 1)}× as long (+${fmt(best.seconds - fast.seconds, 1)} s)${best.extraCpu !== null && fast.extraCpu ? `, compression CPU ${fmt(best.extraCpu / fast.extraCpu, 0)}× (${fmt(best.pages / 1e6 / best.extraCpu, 1)} MB of pages per CPU second against ${fmt(fast.pages / 1e6 / fast.extraCpu, 1)})` : ''}`,
      );
    }
  }
} finally {
  if (!opts.keep) rmSync(work, { recursive: true, force: true });
}
