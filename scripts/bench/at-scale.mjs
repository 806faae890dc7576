// The second part of npm run bench: cities-api serve on the 140k-city benchmark site (npm run
// bench:data; built with the orderings and page sizes of npm run bench:build): the server's RSS
// (at start, after load, peak) against 3 × the dataset's JSON size, and the p99 of a live page
// deep in an ordering under load, then under lighter loads, then with 1 and 2 server processes.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildSite, ROOT, startServe, stop } from './servers.mjs';

/** Current and peak resident memory of a process, in MB (Linux /proc). */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)[1]);
  return { rss: kb('VmRSS') / 1000, peak: kb('VmHWM') / 1000 };
}

export async function atScale({ work, generator, cpus, duration, connections, data, live, static: page }) {
  if (!existsSync(data)) {
    console.error(`\n${data} is missing: deriving it (npm run bench:data) ...`);
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'bench-data.mjs'), '--out', data], { stdio: 'inherit' });
  }
  const dir = join(work, 'large');
  const built = performance.now();
  console.log('\nbuilding the 140k-city site (default, ±name_en, ±name_ar; page sizes 10, 100) ...');
  buildSite([
    '--data',
    data,
    '--site',
    dir,
    '--orderings',
    'default,name_en,-name_en,name_ar,-name_ar',
    '--page-sizes',
    '10,100',
  ]);
  console.log(`built in ${((performance.now() - built) / 1000).toFixed(1)} s`);
  const started = performance.now();
  const serve = await startServe(dir, { cpus: cpus.server });
  try {
    const ready = (performance.now() - started) / 1000;
    const atStart = memory(serve.pid);
    const targets = [
      [`/cities/?${live}`, `live page deep in an ordering (?${live})`],
      [`/cities/?${page}`, `precomputed page (?${page})`],
      [
        '/cities/?ordering=name_fr,-name_en&page_size=25&page=5000',
        'live, two-field ordering (?ordering=name_fr,-name_en&page_size=25&page=5000)',
      ],
    ];
    for (const [path] of targets) await generator.load(`${serve.url}${path}`, { duration: 1, connections });
    const results = [];
    for (const [path, label] of targets)
      results.push({ label, ...(await generator.load(`${serve.url}${path}`, { duration, connections })) });
    // The deep page again under lighter loads: at 32 connections on 2 cores, p99 is mostly queueing.
    const lighter = [];
    for (const fewer of [16, 8])
      lighter.push({
        connections: fewer,
        ...(await generator.load(`${serve.url}${targets[0][0]}`, { duration, connections: fewer })),
      });
    const after = memory(serve.pid);
    const budget = (3 * statSync(data).size) / 1e6;
    console.log(
      `\n140k-city site, loopback, ${connections} connections, ${duration} s each; server ready in ${ready.toFixed(1)} s`,
    );
    for (const r of results)
      console.log(
        `  ${r.label.padEnd(82)} ${String(Math.round(r.rps)).padStart(7)} req/s   p99 ${r.p99.toFixed(2).padStart(6)} ms`,
      );
    console.log(
      `serve RSS: ${atStart.rss.toFixed(0)} MB at start, ${after.rss.toFixed(0)} MB after load, peak ${after.peak.toFixed(0)} MB; budget 3 × dataset JSON = ${budget.toFixed(0)} MB ${after.peak <= budget ? 'ok' : 'MISSED'}`,
    );
    for (const r of lighter)
      console.log(
        `deep live page at ${r.connections} connections: ${Math.round(r.rps)} req/s, p99 ${r.p99.toFixed(2)} ms`,
      );
    console.log(
      `deep live page p99 at ${connections} connections: ${results[0].p99.toFixed(2)} ms (target < 5 ms) ${results[0].p99 < 5 ? 'ok' : 'MISSED'}`,
    );
  } finally {
    await stop(serve.child);
  }
  await deepPageByWorkers({ dir, generator, cpus, duration, connections, path: `/cities/?${live}` });
}

/** The deep live page under the same load, served by 1 then 2 processes (serve --workers). */
async function deepPageByWorkers({ dir, generator, cpus, duration, connections, path }) {
  const rows = [];
  for (const workers of [1, 2]) {
    const server = await startServe(dir, { cpus: cpus.server, args: ['--workers', String(workers)] });
    try {
      await generator.load(`${server.url}${path}`, { duration: 1, connections });
      rows.push({ workers, ...(await generator.load(`${server.url}${path}`, { duration, connections })) });
    } finally {
      await stop(server.child);
    }
  }
  console.log(`\ndeep live page (${path}), ${connections} connections, by serve --workers:`);
  for (const r of rows)
    console.log(
      `  --workers ${r.workers}: ${String(Math.round(r.rps)).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms ${r.p99 < 5 ? 'ok' : 'MISSED'} (target < 5 ms)`,
    );
}
