#!/usr/bin/env node
// npm run bench:edge: the edge projects (`cities-api edge <platform>`) at 20k cities (every
// ordering precomputed, one page size) and 140k cities (the default ordering), edge data format 2.
// Per size and platform: the files and bytes deployed; per query kind (covered: a page a file
// holds; uncovered: a page size no file holds; multi-field; page_size >= count): the first answer
// of a fresh instance, the median and p95 of the next (distinct pages), the bytes read per answer
// after the one-time reads against the goal 3 x the answer + 512 KB (the Node fetch core: the edge
// files' bytes it was handed, by range as on Cloudflare, or whole files as on Lambda with
// `node-whole`; deno serve: the process's read bytes, /proc/PID/io rchar, which also counts the
// small requests; not on workerd, whose rchar does not move as it serves assets), the CPU per answer (Node core) and the runtime process's peak RSS
// (/proc VmHWM; workerd and Deno), and on Deno the isolate's peak heap + external (Deno.memoryUsage(),
// what an isolate's 128 MB counts: its ArrayBuffers are external) against its baseline after the
// one-time reads. Then memory, each against the runtime's baseline after its one-time reads: in a
// Node of 128 MB old space (scripts/bench/edge-memory.mjs), 8 concurrent page_size=20000 answers and
// one of every city, JS heap + ArrayBuffers; on workerd through miniflare (scripts/bench/workerd-memory.mjs:
// the Worker's heap + backing stores before and after each answer, and the process's RSS), three answers
// of every city and 8 concurrent page_size=20000 answers; on deno serve (RSS, and heap + external), 8
// concurrent page_size=20000 answers.
// Every body is checked against answerListing over the whole dataset (ICU in Node).
//
// Lambda: the function from its function.zip in a Node process of its own, V8's spaces as Lambda sizes
// them for --lambda-memory MB (default 128, Lambda's default), answering one request at a time; per
// query kind its CPU, bytes read (rchar) and peak JS heap + external and RSS above its baseline.
//
//   node scripts/bench-edge.mjs [--sizes 20k,140k] [--requests N] [--platforms node,node-whole,workerd,deno,lambda] [--lambda-memory MB]
//     [--deno-v8-defaults]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  answerListing,
  bodyBytes,
  build,
  CityIndex,
  CLOUDFLARE_FREE,
  lib,
  parseQuery,
  planAssets,
  readDataset,
  readManifestHead,
} from './bench/edge-lib.mjs';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    sizes: { type: 'string', default: '20k,140k' },
    requests: { type: 'string', default: '20' },
    platforms: { type: 'string', default: 'node,node-whole,workerd,deno,lambda' },
    'lambda-memory': { type: 'string', default: '128' },
    // deno serve as the project's command runs it (its --v8-flags), or with V8's defaults (as Deno Deploy runs an entry point).
    'deno-v8-defaults': { type: 'boolean', default: false },
  },
});
const BASE = 'https://api.example.org';
const REQUESTS = Number(opts.requests);
const PLATFORMS = opts.platforms.split(',');
const [edge, fetchCore, { edgeSite }] = await Promise.all(
  ['app/edge-project.js', 'http/fetch-handler.js', 'http/edge-site.js'].map(lib),
);
const { workerdMemory } = await import('./bench/workerd-memory.mjs');
const { kinds, statusesLine } = await import('./bench/edge-kinds.mjs');

const SIZES = {
  '20k': { file: 'cities-20k.json', make: ['--bundled', '20000'], orderings: 'all' },
  '140k': { file: 'cities-140k.json', make: [], orderings: ['default'] },
};

for (const size of opts.sizes.split(',')) await benchSize(size, SIZES[size]);

async function benchSize(size, { file, make, orderings }) {
  const data = join(ROOT, 'bench-data', file);
  if (!existsSync(data))
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'bench-data.mjs'), ...make, '--out', data], {
      stdio: 'inherit',
    });
  const work = join(ROOT, 'bench-data', `edge-bench-${size}`);
  rmSync(work, { recursive: true, force: true });
  const site = join(work, 'site');
  mkdirSync(site, { recursive: true });
  const started = performance.now();
  await build({ data, out: site, baseUrl: BASE, pageSizes: [100], orderings, compress: false });
  const index = new CityIndex(await readDataset(data), 'locale');
  console.log(`\n== ${size}: ${index.count} cities, site built in ${secs(performance.now() - started)} ==`);
  const expected = (query) => Buffer.from(bodyBytes(answerListing(index, parseQuery(query), BASE).body));
  console.log('deployed (files, bytes):');
  const projects = {};
  for (const platform of edge.PLATFORMS) {
    // Netlify publishes a directory inside its project: the project is the site's parent.
    try {
      projects[platform] = await edge.writeEdgeProject(
        platform,
        site,
        platform === 'netlify' ? work : join(work, platform),
      );
    } catch (error) {
      // Over a platform's limit (Lambda's 250 MiB at 140k cities): said, and that runtime skipped.
      console.log(
        `  ${platform.padEnd(10)} does not fit: ${error.message.split('\n').slice(1).join(' ').trim().slice(0, 160)}`,
      );
      continue;
    }
    const { files, bytes, unzipped } = await deployed(platform, projects[platform], site);
    const zip = unzipped
      ? ` zipped (${mb(unzipped)} unzipped, ${(unzipped / 262_144_000).toFixed(2)} of Lambda's 250 MiB)`
      : '';
    console.log(`  ${platform.padEnd(10)} ${String(files).padStart(7)} files ${mb(bytes).padStart(9)}${zip}`);
  }
  const runtimes = {
    node: () => nodeCore(site, true),
    'node-whole': () => nodeCore(site, false),
    workerd: () => workerd(projects.cloudflare),
    deno: () => denoServe(projects.deno),
    lambda: () => lambda(projects.lambda, index.count),
  };
  const project = { workerd: 'cloudflare', deno: 'deno', lambda: 'lambda' };
  for (const name of PLATFORMS.filter((p) => !project[p] || projects[project[p]])) {
    console.log(`${name}:`);
    for (const [label, query] of kinds(index.count)) {
      const starting = performance.now();
      const runtime = await runtimes[name]();
      const start = performance.now() - starting;
      try {
        const times = [];
        const cpus = [];
        const reads = [];
        let first = 0;
        const statuses = [];
        for (let i = 0; i <= REQUESTS; i++) {
          const q = query(i);
          runtime.reads && (runtime.reads.bytes = 0);
          if (i > 0) await runtime.before?.();
          const readBefore = await runtime.io?.();
          const cpu = runtime.cpu ? await runtime.cpu() : process.cpuUsage();
          const at = performance.now();
          const got = await runtime.ask(q);
          const wall = performance.now() - at;
          const used = runtime.cpu ? { user: (await runtime.cpu()) - cpu, system: 0 } : process.cpuUsage(cpu);
          statuses.push(got.status);
          if (got.status === 200 && !got.body.equals(expected(q))) throw new Error(`${name} ?${q}: not serve's bytes`);
          if (i === 0) first = wall;
          else {
            times.push(wall);
            cpus.push((used.user + used.system) / 1000);
            const bytes = runtime.reads
              ? runtime.reads.bytes
              : runtime.io
                ? (await runtime.io()) - readBefore
                : Number.NaN;
            if (!Number.isNaN(bytes)) reads.push(bytes / (3 * got.body.length + 512_000));
          }
        }
        const line = [
          `start ${ms(start)}`,
          `first ${ms(first)}`,
          `median ${ms(q(times, 0.5))}`,
          `p95 ${ms(q(times, 0.95))}`,
        ];
        if (name.startsWith('node') || runtime.cpu) line.push(`CPU ${ms(q(cpus, 0.5))}`);
        if (reads.length) line.push(`read/goal median ${q(reads, 0.5).toFixed(2)} max ${q(reads, 1).toFixed(2)}`);
        if (runtime.rss) line.push(`peak RSS ${mb(runtime.rss())}`);
        // The lowest once the first answer is sent (its one-time reads made) and the peak over the next answers.
        if (runtime.heap) line.push(`heap+external low ${mb(runtime.heap.low)}, peak ${mb(runtime.heap.peak)}`);
        // One answer at a time, as a Lambda environment answers: each answer's peak above the baseline
        // measured (garbage collected) just before it, and the highest the process reached.
        if (runtime.above) {
          const { heap, rss, highest } = runtime.above;
          line.push(
            `per answer above baseline: heap+external median +${mb(q(heap, 0.5))} max +${mb(q(heap, 1))}, RSS max +${mb(q(rss, 1))}; highest RSS ${mb(highest.rss)}`,
          );
        }
        console.log(`  ${label.padEnd(28)} ${statusesLine(statuses)} ${line.join(', ')}`);
      } catch (error) {
        // A runtime that fails a kind (wrangler dev, loaded, has cut an answer and failed to rebuild its
        // bundle after the previous dev server's cleanup) is said, and the bench goes on.
        if (!(error instanceof TypeError || error.cause)) throw error;
        console.log(`  ${label.padEnd(28)} FAILED: ${error.message}${error.cause ? ` (${error.cause.message})` : ''}`);
      } finally {
        await runtime.stop?.();
      }
    }
    if (name === 'deno') await concurrentMemory(await runtimes[name](), index.count);
    if (name === 'workerd') {
      const pages = Math.max(1, Math.floor(index.count / 20000));
      const multi = 'ordering=name_de,-name_en&page_size=20000';
      const check = (query, status, body) => {
        if (status !== 200 || !body.equals(expected(query))) throw new Error(`workerd ?${query}: not serve's bytes`);
      };
      const lines = await workerdMemory(
        projects.cloudflare,
        [
          {
            label: 'page_size >= count, 3 answers one after another',
            warm: 'ordering=name_ru&page_size=1',
            queries: [`ordering=name_ru&page_size=${index.count}`],
            times: 3,
          },
          {
            label: '8 concurrent page_size=20000 (multi-field)',
            warm: 'ordering=name_de,-name_en&page_size=1',
            queries: Array.from({ length: 8 }, (_, i) => `${multi}&page=${(i % pages) + 1}`),
            times: 1,
          },
        ],
        check,
      );
      console.log(
        `  memory (miniflare; the inspector answers between requests only: after each answer, a lower bound of the peak):\n${lines.join('\n')}`,
      );
    }
  }
  if (PLATFORMS.includes('node')) {
    const pages = Math.max(1, Math.floor(index.count / 20000));
    for (const [what, n, query, p] of [
      ['8 concurrent page_size=20000 (multi-field)', 8, 'ordering=name_de,-name_en&page_size=20000', pages],
      ['page_size >= count (one answer, then another)', 2, `page_size=${index.count}`, 1],
    ]) {
      const out = execFileSync(
        process.execPath,
        ['--max-old-space-size=128', '--expose-gc', join(ROOT, 'scripts', 'bench', 'edge-memory.mjs')].concat([
          site,
          String(n),
          query,
          String(p),
          n === 2 ? 'one-by-one' : 'at-once',
        ]),
        { encoding: 'utf8' },
      );
      const { before, peak, results } = JSON.parse(out);
      const ok = results.every((r) => r.status === 200);
      const each = n === 2 ? '' : ` (+${mb((peak.js - before.js) / n)} a request)`;
      console.log(
        `memory, ${what} in 128 MB old space: ${ok ? 'all 200' : 'FAILED'}; RSS ${mb(before.rss)} -> peak ${mb(peak.rss)}; JS heap + ArrayBuffers ${mb(before.js)} -> ${mb(peak.js)}${each}`,
      );
    }
  }
  rmSync(work, { recursive: true, force: true });
}

/** 8 concurrent page_size=20000 multi-field answers on a runtime process: its RSS before, and its peak (sampled every 20 ms). */
async function concurrentMemory(runtime, count) {
  try {
    await runtime.ask('page_size=1');
    const before = runtime.rssNow();
    runtime.heap?.reset();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, runtime.rssNow())), 20);
    const pages = Math.max(1, Math.floor(count / 20000));
    const asks = Array.from({ length: 8 }, (_, i) =>
      runtime.ask(`ordering=name_de,-name_en&page_size=20000&page=${(i % pages) + 1}`),
    );
    const got = await Promise.all(asks);
    clearInterval(sampler);
    peak = Math.max(peak, runtime.rssNow());
    const ok = got.every((r) => r.status === 200);
    console.log(
      `  8 concurrent page_size=20000 (multi-field): ${ok ? 'all 200' : `FAILED (${got.map((r) => r.status)})`}; RSS ${mb(before)} -> peak ${mb(peak)} (+${mb((peak - before) / 8)} a request)${runtime.heap ? `; heap+external ${mb(runtime.heap.base)} -> peak ${mb(runtime.heap.peak)} (+${mb((runtime.heap.peak - runtime.heap.base) / 8)} a request)` : ''}`,
    );
  } finally {
    await runtime.stop?.();
  }
}

/** Files and bytes a platform deploys: the project's files and the site's it publishes (Lambda: its zip). */
async function deployed(platform, project, site) {
  if (platform === 'lambda') {
    const zip = join(project.out, 'function.zip');
    const list =
      'import zipfile,sys;i=zipfile.ZipFile(sys.argv[1]).infolist();print(len(i),sum(e.file_size for e in i))';
    const [entries, unzipped] = execFileSync('python3', ['-c', list, zip], { encoding: 'utf8' }).split(' ').map(Number);
    return { files: entries, bytes: statSync(zip).size, unzipped };
  }
  const code = project.files.filter((f) => !f.startsWith('/')).map((f) => statSync(join(project.out, f)).size);
  const published = readdirSync(site, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => statSync(join(e.parentPath, e.name)).size);
  const files = [...code, ...published];
  const bytes = files.reduce((a, b) => a + b, 0);
  // Cloudflare publishes what its plan keeps (the rest ignored by .assetsignore): its count.
  if (platform === 'cloudflare')
    return { files: code.length + (await planAssets(site, CLOUDFLARE_FREE)).files, bytes: Number.NaN };
  return { files: files.length, bytes };
}

/** The fetch core in this process, its edge files read from disk (blocks by range or whole) and counted. */
async function nodeCore(site, ranges) {
  const { settings } = await readManifestHead(site);
  const reads = { bytes: 0 };
  // Into the array the reader gives (a scan's reused ones), as files held open are read on Deno.
  const read = async (path, into) => {
    const bytes = into ? await readInto(join(site, path), into) : new Uint8Array(await readFile(join(site, path)));
    if (path.includes('/rows/')) reads.bytes += bytes.length;
    return bytes;
  };
  const readRange = async (path, start, end) => {
    const file = await open(join(site, path));
    try {
      const bytes = new Uint8Array(end - start);
      const { bytesRead } = await file.read(bytes, 0, bytes.length, start);
      reads.bytes += bytesRead;
      return bytes.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  };
  const handler = fetchCore.createFetchHandler({ site: edgeSite(settings, read, ranges ? { readRange } : {}) });
  return { reads, ask: (q) => answered(handler(new Request(`${BASE}/cities/?${q}`))) };
}

async function answered(responding) {
  const response = await responding;
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
}

/** The Cloudflare project on workerd (wrangler's dev server), its assets the site's files. */
async function workerd(project) {
  process.env.WRANGLER_SEND_METRICS = 'false';
  // Its errors only: the site's Netlify _redirects rules would print a warning each.
  process.env.WRANGLER_LOG = 'error';
  const { unstable_startWorker } = await import('wrangler');
  const worker = await unstable_startWorker({
    config: join(project.out, 'wrangler.jsonc'),
    dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, logLevel: 'error' },
  });
  await worker.ready;
  const url = (await worker.url).origin;
  // Two workerd processes: wrangler's proxy, started first, and the one running the Worker, which
  // wrangler starts at the first request (after listing and hashing every asset file in Node: most
  // of the first answer's time at 140k cities). The proxy's RSS stays flat (~52 MB at any page size).
  const pid = () => newestChild(/workerd/);
  let asked = false;
  return {
    ask: async (q) => {
      try {
        return await answered(fetch(`${url}/cities/?${q}`));
      } catch (error) {
        if (asked) throw error;
        // Loaded (a shared machine), wrangler's proxy may drop the first request while the
        // Worker's workerd starts: said, and asked once more (the first answer's time includes both).
        console.log(`  (workerd: the first request failed, ${error.cause?.code ?? error.message}: asked again)`);
        return answered(fetch(`${url}/cities/?${q}`));
      } finally {
        asked = true;
      }
    },
    rss: () => peakRss(pid()),
    rssNow: () => procStatus(pid(), 'VmRSS'),
    // No bytes read: workerd's rchar stays flat while it serves assets (measured: 0.00 of the goal for every kind).
    // wrangler removes its bundle's temporary files after dispose() settles: the next dev server of the
    // project, started at once, lost its own to that cleanup ('Could not resolve ... middleware-loader.entry.ts').
    stop: async () => {
      await worker.dispose();
      await new Promise((resolve) => setTimeout(resolve, 3000));
    },
  };
}

/** The Deno project under `deno serve`, as its deploy command runs it. */
async function denoServe(project) {
  const [, serve, ...args] = project.deploy
    .split(' ')
    .filter((arg) => !(opts['deno-v8-defaults'] && arg.startsWith('--v8-flags=')));
  // The project's module, its isolate's heap + external printed every 10 ms (Deno.memoryUsage(); unref'd: a
  // timer that holds the event loop keeps deno serve from exiting on SIGTERM).
  const entry = args.at(-1);
  writeFileSync(
    join(project.out, 'bench-memory.js'),
    `import server from './${entry}';\nDeno.unrefTimer(setInterval(() => { const m = Deno.memoryUsage(); console.log('heap+external ' + (m.heapUsed + m.external)); }, 10));\nexport default server;\n`,
  );
  args[args.length - 1] = 'bench-memory.js';
  // Its value when last reset (after the one-time reads), and the lowest and highest since.
  const heap = { now: Number.NaN, base: Number.NaN, low: Number.NaN, peak: Number.NaN };
  heap.reset = () => Object.assign(heap, { base: heap.now, low: heap.now, peak: heap.now });
  const child = spawn(
    join(ROOT, 'node_modules', '.bin', 'deno'),
    [serve, '--host', '127.0.0.1', '--port', '0', ...args],
    {
      cwd: project.out,
      env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const seen = (d) => {
      output += d;
      for (const [, bytes] of String(d).matchAll(/heap\+external (\d+)/g)) {
        heap.now = Number(bytes);
        heap.peak = Math.max(heap.peak, heap.now);
        heap.low = Math.min(heap.low, heap.now);
      }
      output = output.replace(/heap\+external \d+\n/g, '');
      const m = /Listening on (http:\/\/[^\s/]+)/.exec(output);
      if (m) resolve(m[1]);
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.once('exit', (code) => reject(new Error(`deno serve exited with ${code}: ${output}`)));
  });
  let asked = false;
  return {
    // The baseline: after the first answer (the one-time reads).
    ask: async (q) => {
      const got = await answered(fetch(`${url}/cities/?${q}`));
      if (!asked) {
        await new Promise((r) => setTimeout(r, 30));
        heap.reset();
      }
      asked = true;
      return got;
    },
    heap,
    rss: () => peakRss(child.pid),
    rssNow: () => procStatus(child.pid, 'VmRSS'),
    io: () => readBytes(child.pid),
    stop: () => new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM')),
  };
}

/**
 * The Lambda function from the project's function.zip (unpacked by Python's zipfile) in a Node
 * process of its own, as an execution environment runs it (scripts/bench/lambda-runtime.mjs):
 * payload-2.0 events through index.handler, and a page over the buffered 6 MB cap through
 * index.streamingHandler (RESPONSE_STREAM). Its CPU, bytes read (rchar: the package's files, and
 * the few hundred bytes of each request) and memory are the process's own.
 */
async function lambda(project, count) {
  const dir = join(project.out, 'unpacked');
  if (!existsSync(dir)) {
    const unzip = 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])';
    execFileSync('python3', ['-c', unzip, join(project.out, 'function.zip'), dir]);
  }
  // V8's spaces as Lambda's Node.js runtime sizes them for the function's memory (its bootstrap):
  // a tenth for the new space (half of it a semi-space), the rest old space.
  const memory = Number(opts['lambda-memory']);
  const spaces = [
    `--max-semi-space-size=${Math.floor(memory / 20)}`,
    `--max-old-space-size=${memory - Math.floor(memory / 10)}`,
  ];
  const child = spawn(
    process.execPath,
    ['--expose-gc', ...spaces, join(ROOT, 'scripts', 'bench', 'lambda-runtime.mjs'), dir],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      const m = /listening (\d+)/.exec(String(d));
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    child.once('exit', (code) => reject(new Error(`the Lambda runtime exited with ${code}`)));
  });
  const stats = async (reset = false) => (await fetch(`${url}/__bench/stats${reset ? '?reset' : ''}`)).json();
  // Per answer after the first (its one-time reads made): the peak above the baseline taken, garbage collected, just before it.
  const above = { heap: [], rss: [], highest: { rss: 0 } };
  let base;
  return {
    before: async () => void (base = (await stats(true)).now),
    ask: async (q) => {
      const size = Number(new URLSearchParams(q).get('page_size') ?? 10);
      const got = await answered(fetch(`${url}/${size > 5000 ? 'stream' : 'buffered'}/cities/?${q}`));
      if (base) {
        const { peak } = await stats();
        above.heap.push(peak.heap - base.heap);
        above.rss.push(peak.rss - base.rss);
        above.highest.rss = Math.max(above.highest.rss, peak.rss);
      }
      return got;
    },
    io: async () => (await stats()).rchar,
    cpu: async () => (await stats()).cpu,
    above,
    stop: () => new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM')),
    count,
  };
}

/** The child process of this one whose command matches, started last (/proc/PID/stat's start time). */
function newestChild(pattern) {
  const out = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  const pids = out
    .split('\n')
    .filter((l) => pattern.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
  const started = (pid) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19]);
  return pids.sort((a, b) => started(a) - started(b) || a - b).at(-1) ?? null;
}

function peakRss(pid) {
  return procStatus(pid, 'VmHWM');
}

/** A /proc/PID/status figure in bytes (VmHWM, VmRSS). */
function procStatus(pid, name) {
  if (!pid || !existsSync(`/proc/${pid}/status`)) return Number.NaN;
  return Number(new RegExp(`${name}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
}

/** A file's bytes read into the array `into` gives for its size. */
async function readInto(path, into) {
  const file = await open(path);
  try {
    const { size } = await file.stat();
    const bytes = into(size).subarray(0, size);
    const { bytesRead } = await file.read(bytes, 0, size, 0);
    return bytes.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/** Bytes a process has read so far (files and sockets: /proc/PID/io rchar). */
function readBytes(pid) {
  if (!pid || !existsSync(`/proc/${pid}/io`)) return Number.NaN;
  return Number(/rchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
}

function q(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}
function mb(n) {
  return Number.isNaN(n) ? '?' : `${(n / 1e6).toFixed(1)} MB`;
}
function ms(n) {
  return Number.isNaN(n) ? '?' : `${n.toFixed(n < 10 ? 2 : 0)} ms`;
}
function secs(n) {
  return `${(n / 1000).toFixed(1)} s`;
}
