#!/usr/bin/env node
// Reads a V8 .cpuprofile (node --cpu-prof) of a server under load and says where the time goes:
// the top functions by self time, the heaviest call paths (inclusive time), and each sample
// charged to one part of the request path (routing, file cache, headers, send gate, page,
// node:http, the socket writes' syscalls, GC ...), per request when the request count is known.
//
//   node scripts/bench/cpu-profile.mjs FILE.cpuprofile [--requests N] [--top N] [--from US --to US]
// Only the samples between the first and the last one inside node:http's server are counted,
// so starting and stopping the server do not count; with --from/--to, those in that window
// (µs of the monotonic clock V8 stamps samples with: process.hrtime.bigint() / 1000n), for a
// thread that never runs node:http (a build's, a loader's) or a burst within a longer run.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

/** Modules of the package by their file name (folders may move), and what part of serving each is. */
const MODULES = {
  routing: [
    'route.js',
    'route-memo.js',
    'route-table.js',
    'query-string.js',
    'negotiate.js',
    'url-path.js',
    'layout.js',
    'python-text.js',
  ],
  'page (computed)': [
    'page.js',
    'paginate.js',
    'json-text.js',
    'city-index.js',
    'rank-order.js',
    'city-table.js',
    'ordering.js',
    'collation.js',
  ],
  'file cache': ['file-cache.js', 'sirv-response.js'],
  'request log': ['request-log.js', 'log-line.js', 'body-bytes.js'],
  'send gate': ['send-gate.js'],
};
const MODULE_PART = new Map(Object.entries(MODULES).flatMap(([part, files]) => files.map((file) => [file, part])));
/** node:http's functions that set, check and write headers. */
const HEADER_FUNCTIONS = new Set([
  'setHeader',
  'getHeader',
  'hasHeader',
  'removeHeader',
  'writeHead',
  '_storeHeader',
  'processHeader',
  'storeHeader',
  'validateHeaderName',
  'validateHeaderValue',
  'checkInvalidHeaderChar',
  'checkIsHttpToken',
  'matchHeader',
  'utcDate',
  '_implicitHeader',
  'setHeaders',
]);
/** libuv's socket writes: their samples are the kernel's time (on loopback, the TCP path of both ends). */
const SOCKET_WRITES = new Set([
  'writev',
  'writeBuffer',
  'writeUtf8String',
  'writeLatin1String',
  'writeAsciiString',
  'writeUcs2String',
]);
const NODE_HTTP = /^node:(_http_|http$|net$|internal\/(http|streams\/|stream_base_commons|net|js_stream_socket))/;

const HEADERS = 'headers';
/** Which call into node:http the header work came through (the outermost header function on the stack). */
function headerEntry(stack) {
  const entry = stack.findLast((f) => HEADER_FUNCTIONS.has(f.callFrame.functionName) && NODE_HTTP.test(f.callFrame.url))
    ?.callFrame.functionName;
  if (entry === 'setHeader') return 'headers: setHeader, one call a header';
  if (entry === 'writeHead' || entry === '_implicitHeader') return 'headers: writeHead (checks, serializes)';
  return `headers: ${entry}`;
}

/** The part of serving a frame belongs to, or undefined when it inherits its caller's. */
function partOf({ functionName, url }) {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(program)') return 'V8/native (program)';
  if (!url && SOCKET_WRITES.has(functionName)) return 'socket writes (syscall: loopback TCP)';
  if (url.startsWith('node:')) {
    if (HEADER_FUNCTIONS.has(functionName) && NODE_HTTP.test(url)) return HEADERS;
    return NODE_HTTP.test(url) ? 'node:http (parse, respond, write)' : undefined;
  }
  const file = basename(url.replace(/^file:\/\//, ''));
  if (MODULE_PART.has(file)) return MODULE_PART.get(file);
  if (url.includes('/node_modules/sirv/')) return 'file cache';
  if (url.includes('/lib/')) return "serve's handler (server.js, serve.js, ...)";
  if (url.startsWith('[eval]')) return "the server's handler";
  return undefined;
}

/** `window`: count the samples from `window.from` to `window.to` (µs, the profile's clock), not node:http's span. */
export function analyze(profile, window) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, { ...n, self: 0, total: 0, parent: undefined }]));
  for (const n of nodes.values()) for (const c of n.children ?? []) nodes.get(c).parent = n;
  const stackOf = (n) => {
    const stack = [];
    for (let at = n; at; at = at.parent) stack.push(at);
    return stack; // leaf first
  };
  // Sample i lasts until sample i + 1 (as DevTools counts).
  const times = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((t += delta));
  const inWindow = profile.samples.map((id, i) =>
    window
      ? times[i] >= window.from && times[i] < window.to
      : stackOf(nodes.get(id)).some((f) => f.callFrame.url === 'node:_http_server'),
  );
  const first = inWindow.indexOf(true);
  const last = inWindow.lastIndexOf(true);
  if (first < 0 && window) return { busy: 0, idle: 0, wall: 0, parts: [], functions: [], root: undefined, nodes };
  if (first < 0) throw new Error('no sample inside node:http: was the server loaded while profiled?');
  const parts = new Map();
  const functions = new Map();
  let busy = 0;
  let idle = 0;
  for (let i = first; i <= last; i++) {
    const us = (times[i + 1] ?? times[i]) - times[i];
    const node = nodes.get(profile.samples[i]);
    const stack = stackOf(node);
    let part =
      stack.map((f) => partOf(f.callFrame)).find(Boolean) ??
      (stack.some((f) => f.callFrame.url.startsWith('node:')) ? 'node (other: events, timers)' : 'other');
    if (part === HEADERS) part = headerEntry(stack);
    if (part === 'idle') {
      idle += us;
      continue;
    }
    busy += us;
    node.self += us;
    for (const f of stack) f.total += us;
    parts.set(part, (parts.get(part) ?? 0) + us);
    const key = frameName(node.callFrame);
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const root = nodes.get(profile.nodes[0].id);
  return {
    busy,
    idle,
    wall: times[last] - times[first],
    parts: sorted(parts),
    functions: sorted(functions),
    root,
    nodes,
  };
}

const sorted = (map) => [...map].sort((a, b) => b[1] - a[1]);

function frameName({ functionName, url, lineNumber }) {
  const where = url ? `${url.startsWith('node:') ? url : basename(url)}:${lineNumber + 1}` : 'native';
  return `${functionName || '(anonymous)'} ${where}`;
}

const ms = (us) => `${(us / 1000).toFixed(0).padStart(6)} ms`;
const share = (us, of) => `${((100 * us) / of).toFixed(1).padStart(5)} %`;

/** The report as lines: `requests` (served while profiled) gives per-request figures. */
export function report(profile, { requests, top = 25, minShare = 0.02, window } = {}) {
  const a = analyze(profile, window);
  if (!a.root) return ['no sample in the window'];
  const perRequest = (us) => (requests ? `${(us / requests).toFixed(2).padStart(7)} µs/req` : '');
  const lines = [];
  lines.push(
    `profiled window ${(a.wall / 1e6).toFixed(1)} s: busy ${(a.busy / 1e6).toFixed(2)} s, idle ${(a.idle / 1e6).toFixed(2)} s${requests ? `; ${requests} requests, ${(a.busy / requests).toFixed(1)} µs of CPU each` : ''}`,
  );
  lines.push('', 'where the time goes (each sample charged to the innermost part of the request path on its stack):');
  for (const [part, us] of a.parts) lines.push(`  ${part.padEnd(44)} ${ms(us)} ${share(us, a.busy)} ${perRequest(us)}`);
  lines.push('', `top ${top} functions by self time:`);
  for (const [name, us] of a.functions.slice(0, top))
    lines.push(`  ${ms(us)} ${share(us, a.busy)} ${perRequest(us)}  ${name}`);
  lines.push(
    '',
    `heaviest call paths (inclusive time; callees under ${minShare * 100} % left out; a > b: b is nearly all of a):`,
  );
  const walk = (node, depth, chain) => {
    const heavy = (node.children ?? [])
      .map((id) => a.nodes.get(id))
      .filter((c) => c.total >= minShare * a.busy)
      .sort((x, y) => y.total - x.total);
    if (chain.length && heavy.length === 1 && heavy[0].total >= 0.9 * node.total)
      return walk(heavy[0], depth, [...chain, heavy[0]]);
    if (chain.length) {
      const self = node.self >= minShare * a.busy ? `  [self ${(node.self / 1000).toFixed(0)} ms]` : '';
      lines.push(
        `  ${ms(node.total)} ${share(node.total, a.busy)} ${'  '.repeat(depth)}${chain.map((n) => frameName(n.callFrame)).join(' > ')}${self}`,
      );
    }
    for (const child of heavy) walk(child, depth + 1, [child]);
  };
  walk(a.root, -1, []);
  return lines;
}

if (import.meta.main ?? process.argv[1] === import.meta.filename) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      requests: { type: 'string' },
      top: { type: 'string', default: '25' },
      from: { type: 'string' },
      to: { type: 'string' },
    },
  });
  if (positionals.length !== 1) {
    console.error(
      'usage: node scripts/bench/cpu-profile.mjs FILE.cpuprofile [--requests N] [--top N] [--from US --to US]',
    );
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
  console.log(
    report(profile, {
      requests: values.requests ? Number(values.requests) : undefined,
      top: Number(values.top),
      window: values.from
        ? { from: Number(values.from), to: Number(values.to ?? Number.POSITIVE_INFINITY) }
        : undefined,
    }).join('\n'),
  );
}
