#!/usr/bin/env node
// npm run bench: every figure of issue #26's "Done when" from one run, each benchmark in its own
// process one after the other (their output shown as it comes), then the figures gathered:
//   1. bench-server.mjs     live answers (a repeated query, and each query new) against the
//                           same-headers Node ceiling; the request log's cost (serve with its
//                           default log against --quiet); then serve at 140k cities
//   2. bench-post.mjs       POST p50/p99 with 16 concurrent clients, and the time until the
//                           files are current again, at 20k and 140k cities
//   3. bench-orderings.mjs  a static page's p99 while 4 clients send never-seen multi-field
//                           orderings, with 1 and 2 workers, and right after a rebuild (140k);
//                           with Linux perf, what the answering threads waited for meanwhile
//   4. bench-build.mjs      a no-change rebuild against the build (3,000 cities x 33 orderings)
// The machine's load average is printed at the start and end of each: on a shared machine the
// figures are only as good as that.
//
//   node scripts/bench-all.mjs [--skip-large] [--wait-load S] [--duration S] [--only server,post,orderings,build]
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    'skip-large': { type: 'boolean', default: false },
    'wait-load': { type: 'string', default: '60' },
    duration: { type: 'string', default: '5' },
    only: { type: 'string', default: 'server,post,orderings,build' },
  },
});
const large = !opts['skip-large'];
const STEPS = {
  server: {
    script: 'bench-server.mjs',
    args: ['--duration', opts.duration, '--wait-load', opts['wait-load'], ...(large ? [] : ['--skip-large'])],
    figures: [/^goal/, /deep live page p99/],
  },
  post: {
    script: 'bench-post.mjs',
    args: ['--sizes', large ? '20000,140000' : '20000'],
    figures: [/ POSTs by \d+ clients/, /meanwhile serve's threads ran/],
  },
  orderings: {
    script: 'bench-orderings.mjs',
    args: [
      '--duration',
      opts.duration,
      '--sched',
      ...(large ? [] : ['--data', join(ROOT, 'bench-data', 'cities-bundled-20k.json')]),
    ],
    figures: [
      /^goal: static p99/,
      /^\d+ workers?: flat out/,
      /new orderings\/s answered/,
      /by perf sched/,
      /while an answering thread waited/,
      /^profile of the answering thread/,
    ],
  },
  build: {
    script: 'bench-build.mjs',
    args: ['--shape', 'wide', '--rounds', '1', '--rebuilds', '3'],
    figures: [/no-change rebuild.*\/ build/, /build \/ raw writer \(fastest/],
  },
};

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');

function run(name, { script, args, figures }) {
  return new Promise((resolve) => {
    const started = `load average ${load()}`;
    console.log(`\n=== ${name}: node scripts/${script} ${args.join(' ')} (${started})`);
    const child = spawn(process.execPath, [join(ROOT, 'scripts', script), ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.on('close', (code) => {
      const lines = out.split('\n').filter((line) => figures.some((re) => re.test(line.trim())));
      resolve({ name, code, lines: lines.map((l) => l.trim()), load: `${started}, at the end ${load()}` });
    });
  });
}

const results = [];
for (const name of opts.only.split(',')) {
  if (!STEPS[name]) throw new Error(`--only: ${Object.keys(STEPS).join(', ')}; not ${name}`);
  results.push(await run(name, STEPS[name]));
}
console.log('\n=== the figures of issue #26, from this run');
for (const r of results) {
  console.log(`${r.name} (${r.load})${r.code ? `: FAILED, exit ${r.code}` : ''}`);
  for (const line of r.lines) console.log(`  ${line}`);
}
process.exitCode = results.some((r) => r.code) ? 1 : 0;
