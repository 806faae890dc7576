#!/usr/bin/env node
// npm run soak: `cities-api serve` under a long mixed load. Builds a site, starts the server as
// a child process on a random port, and runs autocannon against a list of requests that each
// carry the status (and encoding) they must get: precomputed and live pages, multi-field
// orderings, page=last, 404s, HEAD, gzip/br, conditional GETs, 301/405/414. Samples the
// server's RSS (VmRSS in /proc/PID/status) before, every second during, and after the load.
// Exits 1 on any connection error, timeout, or unexpected answer.
//
//   node scripts/soak.mjs [--duration 30] [--connections 64] [--data data/cities.csv]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const ROOT = join(import.meta.dirname, '..');
// autocannon's HTTP parser, to tell it that the answer to HEAD has no body.
const { HTTPParser } = createRequire(createRequire(import.meta.url).resolve('autocannon'))('http-parser-js');
const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '30' },
    connections: { type: 'string', default: '64' },
    data: { type: 'string', default: join(ROOT, 'data/cities.csv') },
  },
});

for (const name of ['duration', 'connections']) {
  if (!/^[1-9]\d*$/.test(opts[name])) {
    console.error(`soak: --${name} must be a positive integer, not ${opts[name]}`);
    process.exit(2);
  }
}

/** The server's resident memory in MiB, from /proc (null where there is none). */
function rssMiB(pid) {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : null;
  } catch {
    return null;
  }
}

function startServer(site) {
  const args = [
    join(ROOT, 'bin/cities-api.js'),
    'serve',
    '--site',
    site,
    '--data',
    opts.data,
    '--port',
    '0',
    '--quiet',
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = / at (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m) resolve({ url: m[1], child, output: () => out });
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
}

/**
 * autocannon reads a body of Content-Length bytes after every answer, HEAD's too, and would wait
 * forever: the parser is told to skip it (pipelining is 1, so the request iterator's current
 * request is the one being answered).
 */
function headWithoutBody(client) {
  // Called from the client's constructor, before it sets its own handler: patched just after.
  process.nextTick(() => {
    const onHeaders = client.parser[HTTPParser.kOnHeadersComplete];
    client.parser[HTTPParser.kOnHeadersComplete] = (info) => {
      onHeaders(info);
      return client.requestIterator.currentRequest.method === 'HEAD' ? 1 : 0;
    };
  });
}

/** The request mix: [label, request, expected status, expected Content-Encoding]. */
function requestMix(etag) {
  const get = (path, headers = {}) => ({ method: 'GET', path, headers });
  return [
    ['precomputed page 1', get('/cities/'), 200],
    ['precomputed ordering page 2', get('/cities/?ordering=name_en&page=2'), 200],
    ['live page_size=7', get('/cities/?page_size=7'), 200],
    ['live page_size=7 page 3', get('/cities/?page_size=7&page=3'), 200],
    ['live multi-field ordering', get('/cities/?ordering=name_en,-name_ar&page=2'), 200],
    ['live three-field ordering', get('/cities/?ordering=-name_fr,name_de,name_ru'), 200],
    ['precomputed page=last', get('/cities/?page=last'), 200],
    ['live page=last', get('/cities/?page_size=7&page=last'), 200],
    ['live page_size=abc', get('/cities/?page_size=abc&x=1'), 200],
    ['invalid page', get('/cities/?page=999999999'), 404],
    ['unknown format', get('/cities/?format=xml'), 404],
    ['other path', get('/nope'), 404],
    ['HEAD precomputed', { method: 'HEAD', path: '/cities/?page=2' }, 200],
    ['HEAD live', { method: 'HEAD', path: '/cities/?page_size=9' }, 200],
    ['gzip precomputed', get('/cities/?page=2', { 'accept-encoding': 'gzip' }), 200, 'gzip'],
    ['br precomputed', get('/cities/?ordering=-name_ar', { 'accept-encoding': 'gzip, deflate, br' }), 200, 'br'],
    ['conditional GET', get('/cities/', { 'if-none-match': etag }), 304],
    ['indented JSON', get('/cities/?page=2', { accept: 'application/json; indent=2' }), 200],
    ['browsable page', get('/cities/?page_size=5', { accept: 'text/html' }), 200],
    ['OPTIONS', { method: 'OPTIONS', path: '/cities/' }, 200],
    ['no trailing slash', get('/cities?page=2'), 301],
    ['PUT', { method: 'PUT', path: '/cities/' }, 405],
    [
      'POST read-only',
      { method: 'POST', path: '/cities/', headers: { 'content-type': 'application/json' }, body: '{}' },
      403,
    ],
    ['target over 8 KiB', get(`/cities/?x=${'a'.repeat(9000)}`), 414],
  ];
}

const site = mkdtempSync(join(tmpdir(), 'cities-soak-'));
let server;
try {
  server = await startServer(join(site, 'dist'));
  const { pid } = server.child;
  const etag = (await fetch(`${server.url}/cities/`, { headers: { 'accept-encoding': 'identity' } })).headers.get(
    'etag',
  );
  const mix = requestMix(etag);
  const unexpected = new Map();
  const requests = mix.map(([label, request, status, encoding]) => ({
    ...request,
    onResponse: (got, _body, _context, headers) => {
      const gotEncoding = headers['content-encoding'];
      if (got === status && (encoding === undefined || gotEncoding === encoding)) return;
      const key = `${label}: expected ${status}${encoding ? ` ${encoding}` : ''}, got ${got}${gotEncoding ? ` ${gotEncoding}` : ''}`;
      unexpected.set(key, (unexpected.get(key) ?? 0) + 1);
    },
  }));
  const rss = { before: rssMiB(pid), max: rssMiB(pid) ?? 0, after: null, samples: [] };
  const sampler = setInterval(() => {
    const now = rssMiB(pid) ?? 0;
    rss.samples.push(now);
    rss.max = Math.max(rss.max, now);
  }, 1000);
  console.log(
    `soak: ${server.url}, dataset ${opts.data}, ${mix.length} kinds of request, ${opts.connections} connections, ${opts.duration} s`,
  );
  const result = await autocannon({
    url: server.url,
    connections: Number(opts.connections),
    duration: Number(opts.duration),
    requests,
    setupClient: headWithoutBody,
  });
  clearInterval(sampler);
  const alive = (await fetch(`${server.url}/cities/?page=2`)).status === 200;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  rss.after = rssMiB(pid);
  rss.max = Math.max(rss.max, rss.after ?? 0);

  const badAnswers = [...unexpected.values()].reduce((a, b) => a + b, 0);
  const mib = (v) => (v === null ? 'n/a' : `${v.toFixed(1)} MiB`);
  console.log(`requests:    ${result.requests.total} in ${result.duration} s`);
  console.log(
    `req/s:       ${Math.round(result.requests.average)} (average), latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
  );
  console.log(
    `statuses:    ${Object.entries(result.statusCodeStats)
      .map(([code, { count }]) => `${code}: ${count}`)
      .join(', ')}`,
  );
  console.log(`errors:      ${result.errors} (timeouts ${result.timeouts})`);
  console.log(`unexpected:  ${badAnswers}`);
  for (const [key, count] of unexpected) console.log(`  ${count} x ${key}`);
  console.log(`RSS:         before ${mib(rss.before)}, after ${mib(rss.after)}, max ${mib(rss.max)}`);
  const every = Math.max(1, Math.round(rss.samples.length / 6));
  console.log(
    `RSS during:  ${rss.samples.flatMap((v, i) => ((i + 1) % every ? [] : [`${i + 1} s ${v.toFixed(0)}`])).join(', ')} (MiB)`,
  );
  console.log(`server:      ${alive ? 'still answering' : 'NOT ANSWERING'} after the load`);
  const ok = result.errors === 0 && result.timeouts === 0 && badAnswers === 0 && alive;
  console.log(ok ? 'soak: ok' : 'soak: FAILED');
  process.exitCode = ok ? 0 : 1;
} finally {
  if (server) {
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await exited;
  }
  rmSync(site, { recursive: true, force: true });
}
