// The servers the benchmarks load, each its own process (optionally pinned to CPUs): cities-api
// serve through its CLI, two small node:http servers sending fixed answers, and real nginx with
// the site's generated config. Only the CLI and the package's public entry are used.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { pinned } from './load.mjs';

export const ROOT = join(import.meta.dirname, '..', '..');
export const CLI = join(ROOT, 'bin', 'cities-api.js');
export const NGINX = '/usr/sbin/nginx';

/** Headers node:http adds to every answer by itself (the small servers send them too). */
const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/**
 * Starts `node ...args` (on `cpus` when given) and resolves once it prints an http://127.0.0.1 URL.
 * `nodeFlags` go before the script (e.g. --cpu-prof); `wrap`, a command and its arguments, runs node
 * (e.g. under valgrind); `env`, variables added to this process's environment.
 */
export function startNode(args, { label, cpus, nodeFlags = [], wrap = [], env = {} }) {
  const [program, ...rest] = [...wrap, process.execPath, ...nodeFlags, ...args];
  const [command, argv] = pinned(cpus, program, rest);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    let out = '';
    let started = false;
    child.stdout.on('data', (d) => {
      if (started) return; // what follows (a request log) is drained, not kept
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        started = true;
        resolve({ url: m[1], child, pid: child.pid });
      }
    });
    child.on('exit', (code) => reject(new Error(`${label} exited with ${code}: ${out}`)));
  });
}

/** `cities-api serve DIR` on any free port, --quiet unless `quiet: false` (its default request log, drained). */
export function startServe(dir, options = {}) {
  const quiet = options.quiet === false ? [] : ['--quiet'];
  return startNode([CLI, 'serve', '--site', dir, '--port', '0', ...quiet, ...(options.args ?? [])], {
    label: 'cities-api serve',
    ...options,
  });
}

/** Ends a child (SIGTERM: serve closes and exits normally, so --cpu-prof writes its profile). */
export function stop(child, signal = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill(signal);
  });
}

/** `cities-api build`, its output shown. */
export function buildSite(args) {
  execFileSync(process.execPath, [CLI, 'build', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** One GET as wrk sends it (no Accept, no Accept-Encoding): status, headers as sent, body. */
export function answerOf(url) {
  return new Promise((resolve, reject) => {
    get(url, { headers: { connection: 'close' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

/**
 * Serve's answers to `queries` ({ kind: query }), from a serve of `site` started for it and stopped:
 * { kind: { path, body, headers } }, the bytes and headers the benchmarks' ceilings send.
 */
export async function serveAnswers(site, queries, options = {}) {
  const probe = await startServe(site, options);
  try {
    const answers = {};
    for (const [kind, query] of Object.entries(queries)) {
      const path = `/cities/?${query}`;
      const answer = await answerOf(`${probe.url}${path}`);
      if (answer.status !== 200) throw new Error(`serve answered ${answer.status} to ${path}`);
      answers[kind] = { path, body: answer.body, headers: ownHeaders(answer.rawHeaders) };
    }
    return answers;
  } finally {
    await stop(probe.child);
  }
}

/** An answer's headers as sent, as a flat [name, value, ...] list, without those node:http adds itself. */
export function ownHeaders(rawHeaders) {
  const flat = [];
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (!NODE_OWN.has(rawHeaders[i].toLowerCase())) flat.push(rawHeaders[i], rawHeaders[i + 1]);
  return flat;
}

const SMALL_SERVER = `
const http = require('node:http');
const answers = new Map(JSON.parse(process.argv[1]).map(([url, body, headers]) => [url, [Buffer.from(body, 'base64'), headers]]));
http.createServer((req, res) => {
  const answer = answers.get(req.url);
  if (!answer) return void res.writeHead(404).end();
  res.writeHead(200, answer[1]);
  res.end(answer[0]);
}).listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + this.address().port); });
process.once('SIGTERM', () => process.exit(0)); // a normal exit, so that --cpu-prof writes its profile
`;

/**
 * A minimal http.createServer answering fixed requests from memory: `answers` is a list of
 * { path, body, headers } (headers: the flat [name, value, ...] list given to writeHead as is).
 */
export function startSmallServer(answers, options) {
  const list = answers.map(({ path, body, headers }) => [path, body.toString('base64'), headers]);
  return startNode(['-e', SMALL_SERVER, JSON.stringify(list)], options);
}

/** The two headers of a minimal server: the type and the length. */
export const minimalHeaders = (body) => ['Content-Type', 'application/json', 'Content-Length', String(body.length)];

function listening(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => resolve(!!socket.end()));
    socket.on('error', () => resolve(false));
  });
}

/**
 * Real nginx (a non-daemon master and one worker, in `dir`) serving `site` with the config
 * `cities-api config nginx` generates for it: what a user deploys. keepalive_requests is raised
 * so that nginx, like node:http, keeps each connection for the whole run.
 */
export async function startNginx(dir, site, { cpus, port, liveUrl }) {
  mkdirSync(join(dir, 'logs'), { recursive: true });
  chmodSync(dir, 0o755);
  const generated = execFileSync(process.execPath, [CLI, 'config', 'nginx', '--site', site, '--live-url', liveUrl], {
    encoding: 'utf8',
  });
  writeFileSync(join(dir, 'cities-api.conf'), generated);
  const conf = join(dir, 'nginx.conf');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `${kind}_temp_path ${dir}/${kind};`);
  const main = [
    process.getuid?.() === 0 ? 'user root;' : '',
    'worker_processes 1;',
    'daemon off;',
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/logs/error.log warn;`,
    'events { worker_connections 1024; }',
  ];
  const server = `server { listen 127.0.0.1:${port}; root ${site}; include ${dir}/cities-api.conf; }`;
  writeFileSync(
    conf,
    [...main, 'http {', 'access_log off;', 'keepalive_requests 100000000;', ...temp, server, '}', ''].join('\n'),
  );
  execFileSync(NGINX, ['-t', '-q', '-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'inherit'] });
  const [command, argv] = pinned(cpus, NGINX, ['-p', dir, '-c', conf]);
  const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 100 && !(await listening(port)); i++) await new Promise((r) => setTimeout(r, 50));
  if (!(await listening(port))) throw new Error(`nginx did not start: see ${dir}/logs/error.log`);
  return { url: `http://127.0.0.1:${port}`, child, pid: child.pid, stop: () => stop(child, 'SIGQUIT') };
}

/** A port free now on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** A process and all its descendants (Linux /proc), those gone meanwhile left out. */
export function processTree(pid) {
  const ids = [];
  const visit = (id) => {
    try {
      const tasks = readdirSync(`/proc/${id}/task`);
      ids.push(Number(id));
      for (const task of tasks)
        for (const child of readFileSync(`/proc/${id}/task/${task}/children`, 'utf8').split(' ').filter(Boolean))
          visit(child);
    } catch {
      // gone meanwhile
    }
  };
  visit(pid);
  return ids;
}

/** CPU seconds (user + system) a process and all its descendants have used so far (Linux /proc). */
export function cpuSeconds(pid) {
  let ticks = 0;
  for (const id of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${id}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // gone meanwhile
    }
  }
  return ticks / CLOCK_TICKS;
}
