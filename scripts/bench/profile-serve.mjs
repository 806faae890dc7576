// npm run bench -- --profile: where serve's time goes. Runs `cities-api serve` under
// `node --cpu-prof` while wrk loads one page (the precomputed one, then, in a new process, the
// live one), and the same-headers ceiling for each page likewise, as the reference for what
// node:http and the kernel cost with the same bytes and headers;
// then reads each .cpuprofile (see cpu-profile.mjs) and prints, per request, what each part of
// the request path costs, side by side. The profiles are kept, for Chrome DevTools.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { analyze, report } from './cpu-profile.mjs';
import { distinctLua } from './load.mjs';
import { serveAnswers, startServe, startSmallServer, stop } from './servers.mjs';

export async function profileServe({ site, queries, generator, cpus, connections, duration, interval, dir }) {
  mkdirSync(dir, { recursive: true });
  const flags = (name) => [
    '--cpu-prof',
    '--cpu-prof-dir',
    dir,
    '--cpu-prof-name',
    `${name}.cpuprofile`,
    '--cpu-prof-interval',
    String(interval),
  ];
  const answers = await serveAnswers(site, queries, { cpus: cpus.server });
  const runs = [
    {
      name: 'serve-precomputed',
      path: answers.precomputed.path,
      start: (nodeFlags) => startServe(site, { cpus: cpus.server, nodeFlags }),
    },
    {
      // The default request log (no --quiet): what a line per request costs beside serve-precomputed.
      name: 'serve-precomputed-logged',
      path: answers.precomputed.path,
      start: (nodeFlags) => startServe(site, { cpus: cpus.server, nodeFlags, quiet: false }),
    },
    {
      name: 'serve-live',
      path: answers.live.path,
      start: (nodeFlags) => startServe(site, { cpus: cpus.server, nodeFlags }),
    },
    {
      // BD: the live page with a query never asked before each time (computed, never from the answer cache).
      name: 'serve-live-distinct',
      path: answers.live.path,
      lua: () => distinctLua(answers.live.path),
      start: (nodeFlags) => startServe(site, { cpus: cpus.server, nodeFlags }),
    },
    {
      name: 'ceiling-precomputed',
      path: answers.precomputed.path,
      start: (nodeFlags) =>
        startSmallServer([answers.precomputed], { label: 'same-headers ceiling', cpus: cpus.server, nodeFlags }),
    },
    {
      name: 'ceiling-live',
      path: answers.live.path,
      start: (nodeFlags) =>
        startSmallServer([answers.live], { label: 'same-headers ceiling', cpus: cpus.server, nodeFlags }),
    },
  ];
  console.log(
    `\nprofiling: node --cpu-prof (a sample every ${interval} µs), ${duration} s of load each, ${connections} connections; profiles in ${dir}`,
  );
  const summaries = [];
  for (const run of runs) {
    const file = join(dir, `${run.name}.cpuprofile`);
    rmSync(file, { force: true });
    const server = await run.start(flags(run.name));
    let loaded;
    try {
      loaded = await generator.load(`${server.url}${run.path}`, { duration, connections, lua: run.lua?.() });
    } finally {
      await stop(server.child);
    }
    if (!existsSync(file)) throw new Error(`${run.name}: node wrote no profile at ${file}`);
    const profile = JSON.parse(readFileSync(file, 'utf8'));
    console.log(
      `\n=== ${run.name}: GET ${run.path}: ${Math.round(loaded.rps)} req/s while profiled (the profiler costs some), p99 ${loaded.p99.toFixed(2)} ms`,
    );
    console.log(report(profile, { requests: loaded.requests }).join('\n'));
    summaries.push({ name: run.name, requests: loaded.requests, analysis: analyze(profile) });
  }
  console.log('\nper request, µs of CPU (columns: the runs above):');
  const parts = [...new Set(summaries.flatMap((s) => s.analysis.parts.map(([part]) => part)))];
  console.log(`  ${''.padEnd(44)}${summaries.map((s) => s.name.padStart(26)).join('')}`);
  for (const part of [...parts, 'all']) {
    const cells = summaries.map(({ analysis, requests }) => {
      const us = part === 'all' ? analysis.busy : (analysis.parts.find(([p]) => p === part)?.[1] ?? 0);
      return (us / requests).toFixed(2).padStart(26);
    });
    console.log(`  ${part.padEnd(44)}${cells.join('')}`);
  }
}
