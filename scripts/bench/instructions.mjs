// npm run bench:instructions: what one request costs, in instructions counted by valgrind's
// callgrind, for serve's answers and the same-headers ceiling. Unlike req/s on a shared machine,
// the count does not depend on what the neighbours do: two runs agree within 1-2 %, so a cost
// of a few percent (the request log) can be told from noise.
//
// Each kind runs in a process of its own, started under callgrind with instrumentation off; after
// `warmup` requests (the JIT's tiers) and SETTLE_ROUNDS pauses (valgrind runs one thread at a
// time, so V8's compiler threads, which optimize in the background, fall behind the requests:
// without the pauses, most requests counted still ran baseline code, 154k instructions a
// never-seen live page instead of 116k, a state a server not under valgrind is in for a moment
// only), the counters are zeroed, `requests` more are sent one after another by this process, and
// the main thread's count (the JavaScript, node:http, libuv: what bounds a server's req/s) is
// divided by `requests`. The other threads (V8's compiler and collector helpers) are shown apart:
// under valgrind a request takes ~100 times as long, so their work by the clock is overstated.
// Only user space is counted: the kernel's part of a request (the socket's syscalls, the same for
// the same bytes) is left out of both sides, so a ratio here is further from 1 than the same ratio
// in req/s: a goal met here is met with the kernel too. With `top`, each kind's costliest functions.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { join } from 'node:path';
import { CEILING_GOALS, LOG_GOAL, LOG_PAIRS } from './server-goals.mjs';
import { serveAnswers, startServe, startSmallServer, stop } from './servers.mjs';

export const VALGRIND = '/usr/bin/valgrind';
/** The kinds counted, in order: which answer, from which server (serve quiet or logging, or the ceiling). */
const KIND_TABLE = [
  { key: 'A', label: 'serve, precomputed page', answer: 'precomputed', server: 'quiet' },
  { key: 'AL', label: 'A with the default request log', answer: 'precomputed', server: 'logging' },
  { key: 'B', label: 'serve, live page', answer: 'live', server: 'quiet' },
  { key: 'BL', label: 'B with the default request log', answer: 'live', server: 'logging' },
  { key: 'BD', label: 'B, each query new (&n=...)', answer: 'live', server: 'quiet', distinct: true },
  { key: 'D', label: "same-headers ceiling, A's answer", answer: 'precomputed', server: 'ceiling' },
  { key: "D'", label: "same-headers ceiling, B's answer", answer: 'live', server: 'ceiling' },
];
export const KINDS = KIND_TABLE.map((kind) => kind.key);

/** After the warm-up: pauses in which the compiler threads catch up, each followed by requests that use what they compiled. */
const SETTLE_ROUNDS = 2;
const SETTLE_MS = 10_000;
const SETTLE_REQUESTS = 2000;
const idle = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function countInstructions({ site, queries, dir, warmup, requests, only, top = 0 }) {
  if (!existsSync(VALGRIND)) throw new Error(`${VALGRIND} is missing: apt-get install -y valgrind`);
  mkdirSync(dir, { recursive: true });
  const answers = await serveAnswers(site, queries);
  const starts = {
    quiet: (nodeFlags, wrap) => startServe(site, { quiet: true, nodeFlags, wrap }),
    logging: (nodeFlags, wrap) => startServe(site, { quiet: false, nodeFlags, wrap }),
    ceiling: (nodeFlags, wrap) =>
      startSmallServer([answers.precomputed, answers.live], { label: 'same-headers ceiling', nodeFlags, wrap }),
  };
  const kinds = KIND_TABLE.map((kind) => ({ ...kind, path: answers[kind.answer].path, start: starts[kind.server] }));
  console.log(
    `\ninstructions per request (valgrind --tool=callgrind, user space; ${warmup} requests to warm up, ${SETTLE_ROUNDS} pauses of ${SETTLE_MS / 1000} s for the compiler threads, then ${requests} counted, one at a time):`,
  );
  console.log(`${''.padEnd(46)}main thread  other threads`);
  const counts = {};
  for (const kind of kinds.filter((k) => !only || only.includes(k.key))) {
    const { main, others, functions } = await countOne(kind, { dir, warmup, requests, top });
    counts[kind.key] = main;
    console.log(`  ${kind.key.padEnd(3)} ${kind.label.padEnd(40)} ${thousands(main)} ${thousands(others)}`);
    if (functions)
      for (const [fn, n] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top))
        console.log(`${''.padEnd(8)}${thousands(n)}  ${fn}`);
  }
  const goals = [
    ...CEILING_GOALS.map(([row, ceiling, goal]) => [row, ceiling, goal, `${row} against the same-headers ceiling`]),
    ...LOG_PAIRS.map(([logged, quiet]) => [logged, quiet, LOG_GOAL, 'the request log']),
  ];
  console.log(
    "ratios (the main thread's instructions of the column / of the row: the row's req/s, were the main thread the bound):",
  );
  for (const [row, column, goal, what] of goals) {
    if (!counts[row] || !counts[column]) continue;
    const r = counts[column] / counts[row];
    console.log(
      `  ${`${row} / ${column}`.padEnd(9)} ${r.toFixed(2)}  goal >= ${goal}: ${r >= goal ? 'ok' : 'MISSED'}  (${what})`,
    );
  }
  return counts;
}

async function countOne(kind, { dir, warmup, requests, top }) {
  const name = `callgrind.${kind.key.replace("'", 'p')}`;
  const wrap = [
    VALGRIND,
    '--tool=callgrind',
    '--separate-threads=yes',
    '--instr-atstart=no',
    `--callgrind-out-file=${join(dir, name)}.%p`,
    `--log-file=${join(dir, name)}.log`,
  ];
  // --perf-basic-prof: node writes where its compiled JavaScript lies, for naming it (top).
  const server = await kind.start(top ? ['--perf-basic-prof'] : [], wrap);
  try {
    let next = 0;
    const path = () => (kind.distinct ? `${kind.path}&n=${next++}` : kind.path);
    await send(server.url, path, warmup);
    for (let round = 0; round < SETTLE_ROUNDS; round++) {
      await idle(SETTLE_MS);
      await send(server.url, path, SETTLE_REQUESTS);
    }
    await idle(SETTLE_MS);
    control(server.pid, '-i', 'on');
    control(server.pid, '-z');
    await send(server.url, path, requests);
    control(server.pid, '-d');
    // One file per thread: `-01` is the main thread, which runs the JavaScript and answers.
    const prefix = `${name}.${server.pid}.1-`;
    const threads = readdirSync(dir).filter((f) => f.startsWith(prefix));
    if (!threads.length) throw new Error(`callgrind wrote no dump for ${kind.key} in ${dir}`);
    let main = 0;
    let others = 0;
    for (const file of threads) {
      const totals = /^totals:\s+(\d+)/m.exec(readFileSync(join(dir, file), 'utf8'));
      if (!totals) throw new Error(`no totals line in ${join(dir, file)}`);
      if (file.endsWith('-01')) main += Number(totals[1]);
      else others += Number(totals[1]);
    }
    const functions = top ? byFunction(join(dir, `${prefix}01`), server.pid, requests) : undefined;
    return { main: main / requests, others: others / requests, functions };
  } finally {
    await stop(server.child);
    rmSync(`/tmp/perf-${server.pid}.map`, { force: true });
  }
}

/**
 * The main thread's instructions per request by function (self), compiled JavaScript named from
 * node's /tmp/perf-PID.map (callgrind sees only addresses there): a Map of name to instructions.
 */
function byFunction(dump, pid, requests) {
  const map = readFileSync(`/tmp/perf-${pid}.map`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [start, size, ...words] = line.split(' ');
      return { start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), name: words.join(' ') };
    })
    .sort((a, b) => a.start - b.start);
  const named = (address) => {
    let [lo, hi] = [0, map.length - 1];
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (map[mid].start <= address) lo = mid + 1;
      else hi = mid - 1;
    }
    const entry = map[hi];
    return entry && address < entry.end ? entry.name : `0x${address.toString(16)}`;
  };
  const text = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', dump], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const functions = new Map();
  for (const line of text.split('\n')) {
    const m = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line);
    if (!m || m[2].includes('PROGRAM TOTALS')) continue;
    const jit = /^\?\?\?:0x([0-9a-f]+) \[\?\?\?\]/.exec(m[2]);
    const fn = jit
      ? named(parseInt(jit[1], 16))
      : m[2]
          .replace(/^\S*?:/, '')
          .replace(/\(.*$/, '')
          .slice(0, 90);
    functions.set(fn, (functions.get(fn) ?? 0) + Number(m[1].replaceAll(',', '')) / requests);
  }
  return functions;
}

function control(pid, ...args) {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });
}

/**
 * `count` GETs of `path()`, one after another on one keep-alive connection, each answered 200 and
 * read whole: every request then has an event-loop turn of its own, for every kind alike.
 */
async function send(url, path, count) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < count; i++)
      await new Promise((resolve, reject) => {
        get(`${url}${path()}`, { agent }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
          res.on('data', () => {});
          res.on('end', resolve);
        }).on('error', reject);
      });
  } finally {
    agent.destroy();
  }
}

const thousands = (n) => Math.round(n).toLocaleString('en-US').padStart(12);
