#!/usr/bin/env node
// npm run bench:cloudflare: docs/cloudflare.md's path at 140k cities, as a new user runs it, and
// Cloudflare's limits on what it makes (Workers Free: at most 20,000 static asset files per Worker
// version, 25 MiB a file). Prints what a default build would be (refused: millions of files), then
// `cities-api build --for cloudflare` and `cities-api edge cloudflare`: the site's files and bytes,
// what the Worker publishes of it (.assetsignore: files, bytes, the largest file), then `npx
// wrangler dev` in the project, a process as a user starts it: seconds until it answers, the
// inotify watches it holds (Linux), the warnings it prints (but the offline machine's `Request.cf`
// one), and its first answers: covered (a file), computed (a deep page, a multi-field ordering) and
// a page_size above the number of cities (every city on one page, streamed; also in a multi-field
// ordering, whose first field the tied dataset ties in large groups: fine blocks).
//
//   node scripts/bench-cloudflare.mjs [--data FILE] [--dir DIR]
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'bin', 'cities-api.js');
const WRANGLER = join(ROOT, 'node_modules', '.bin', 'wrangler');
const { values: opts } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, 'bench-data', 'cities-140k.json') },
    dir: { type: 'string', default: join(ROOT, '.cache', 'bench-cloudflare') },
  },
});
const { planAssets } = await import(join(ROOT, 'lib', 'platforms', 'cloudflare', 'assets.js'));
const { CLOUDFLARE_FREE } = await import(join(ROOT, 'lib', 'site', 'asset-budget.js'));
const BASE = 'https://api.example.org';
const site = join(opts.dir, 'dist');
const project = join(opts.dir, 'edge-cloudflare');
mkdirSync(opts.dir, { recursive: true });
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
const run = (args) => {
  const started = performance.now();
  try {
    const out = execFileSync(process.execPath, [CLI, ...args], { cwd: opts.dir, encoding: 'utf8', stdio: 'pipe' });
    return { code: 0, out, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    return { code: error.status, out: `${error.stdout}${error.stderr}`, seconds: (performance.now() - started) / 1000 };
  }
};

// 1. The default build, as docs/deploy.md has it: refused before anything is written.
const refused = run(['build', '--data', opts.data, '--site', join(opts.dir, 'default'), '--base-url', BASE]);
const would = /would hold ([\d,]+) files/.exec(refused.out)?.[1];
console.log(`default build: exit ${refused.code}${would ? `, refused: ${would} files` : ''}`);

// 2. The documented commands for Cloudflare.
const built = run(['build', '--for', 'cloudflare', '--data', opts.data, '--site', site, '--base-url', BASE]);
if (built.code) throw new Error(built.out);
const edge = run(['edge', 'cloudflare', '--site', site, '--project', project]);
if (edge.code) throw new Error(edge.out);
const manifest = JSON.parse(readFileSync(join(site, '_cities-api', 'manifest.json'), 'utf8'));
const count = manifest.dataset.count;
let siteFiles = 0;
let siteBytes = 0;
let dirs = 0;
for (const e of readdirSync(site, { recursive: true, withFileTypes: true })) {
  if (e.isDirectory()) dirs++;
  if (!e.isFile()) continue;
  siteFiles++;
  siteBytes += statSync(join(e.parentPath, e.name)).size;
}
const plan = await planAssets(site, CLOUDFLARE_FREE);
console.log(
  `build --for cloudflare (${count} cities): ${built.seconds.toFixed(1)} s; first ${manifest.settings.firstPages ?? 'all'} pages of each list; site ${siteFiles} files in ${dirs} directories, ${mb(siteBytes)}`,
);
console.log(
  `published (.assetsignore): ${plan.files} files (limit ${CLOUDFLARE_FREE.files}), ${mb(plan.bytes)}, largest ${plan.largest.of} ${mb(plan.largest.value)} (limit ${mb(CLOUDFLARE_FREE.fileBytes)}); edge cloudflare warnings: ${(edge.out.match(/warning/g) ?? []).length}`,
);

// 3. wrangler dev in the project.
const started = performance.now();
const child = spawn(WRANGLER, ['dev', '--ip', '127.0.0.1', '--port', '0', '--inspector-port', '0'], {
  cwd: project,
  env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', CI: 'true' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let output = '';
child.stdout.on('data', (d) => (output += d));
child.stderr.on('data', (d) => (output += d));
try {
  let url;
  while (!url) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${output}`);
    if (performance.now() - started > 600_000) throw new Error(`wrangler dev did not start in 10 min:\n${output}`);
    url = /Ready on (http:\/\/[^\s/]+)/.exec(output)?.[1];
    await new Promise((r) => setTimeout(r, 100));
  }
  const ready = (performance.now() - started) / 1000;
  while (
    !(await fetch(`${url}/openapi.json`).then(
      (r) => r.arrayBuffer().then(() => r.ok),
      () => false,
    ))
  )
    await new Promise((r) => setTimeout(r, 200));
  const answering = (performance.now() - started) / 1000;
  const warnings = output.split('\n').filter((l) => /warn/i.test(l) && !/Request\.cf/.test(l));
  console.log(
    `wrangler dev: "Ready" after ${ready.toFixed(1)} s, answering after ${answering.toFixed(1)} s; ${watches(child.pid) ?? '?'} inotify watches (max_user_watches ${readOr('/proc/sys/fs/inotify/max_user_watches')}); ${warnings.length} warnings${warnings.length ? `: ${warnings.slice(0, 3).join(' | ')}` : ''}`,
  );
  const queries = [
    ['covered, first page', ''],
    ['covered, -name_ar page 2', 'ordering=-name_ar&page=2'],
    ['computed, deep page', 'ordering=-name_ar&page_size=7&page=15000'],
    ['computed, past the first pages', `ordering=name_en&page=${(manifest.settings.firstPages ?? 0) + 1}`],
    ['computed, multi-field', 'ordering=name_en,-name_ar&page=3'],
    ['page_size above count', `page_size=${count + 1}`],
    ['page_size above count, multi-field', `ordering=name_it,-name_de&page_size=${count + 1}`],
  ];
  for (const [what, query] of queries) {
    const times = [];
    let status;
    let bytes;
    for (let i = 0; i < 2; i++) {
      const t = performance.now();
      const response = await fetch(`${url}/cities/?${query}`);
      bytes = (await response.arrayBuffer()).byteLength;
      status = response.status;
      times.push(performance.now() - t);
    }
    console.log(
      `  ${what} (?${query}): ${status}, ${bytes} bytes, first ${times[0].toFixed(0)} ms, again ${times[1].toFixed(0)} ms`,
    );
  }
} finally {
  child.kill('SIGTERM');
}

function readOr(path) {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '?';
  }
}

/** Inotify watches of a process and its descendants (Linux). */
function watches(pid) {
  try {
    const children = readOr(`/proc/${pid}/task/${pid}/children`)
      .split(' ')
      .filter((p) => /^\d+$/.test(p));
    let n = 0;
    for (const fd of readdirSync(`/proc/${pid}/fdinfo`))
      n += readOr(`/proc/${pid}/fdinfo/${fd}`)
        .split('\n')
        .filter((l) => l.startsWith('inotify')).length;
    return n + children.reduce((sum, c) => sum + (watches(Number(c)) ?? 0), 0);
  } catch {
    return null;
  }
}
