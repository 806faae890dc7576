// npm run bench -- --instructions: what one request costs, in instructions counted by valgrind's
// callgrind, for serve's answers and the same-headers ceiling. Unlike req/s on a shared machine,
// the count does not depend on what the neighbours do: two runs agree within about 1 %, so a cost
// of a few percent (the request log) can be told from noise.
//
// Each kind runs in a process of its own, started under callgrind with instrumentation off; after
// `warmup` requests (the JIT's tiers, caches) the counters are zeroed, `requests` more are sent over
// `connections` keep-alive connections by this process, and the process's total (every thread) is
// dumped and divided by `requests`. Only user space is counted: the kernel's part of a request
// (the socket's syscalls, the same for the same bytes) is left out of both sides, so a ratio here
// is further from 1 than the same ratio in req/s would be: a goal met here is met with the kernel too.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { join } from 'node:path';
import { answerOf, ownHeaders, startServe, startSmallServer, stop } from './servers.mjs';

const VALGRIND = '/usr/bin/valgrind';

export async function countInstructions({ site, queries, dir, warmup, requests, connections, only }) {
  if (!existsSync(VALGRIND)) throw new Error(`${VALGRIND} is missing: apt-get install -y valgrind`);
  mkdirSync(dir, { recursive: true });
  const answers = await probeAnswers(site, queries);
  const ceiling = (nodeFlags, wrap) =>
    startSmallServer([answers.precomputed, answers.live], { label: 'same-headers ceiling', nodeFlags, wrap });
  const kinds = [
    { key: 'A', label: 'serve, precomputed page', path: answers.precomputed.path, start: serveWith([]) },
    { key: 'AL', label: 'A with the default request log', path: answers.precomputed.path, start: serveWith(null) },
    { key: 'B', label: 'serve, live page', path: answers.live.path, start: serveWith([]) },
    { key: 'BL', label: 'B with the default request log', path: answers.live.path, start: serveWith(null) },
    { key: 'BD', label: 'B, each query new (&n=...)', path: answers.live.path, start: serveWith([]), distinct: true },
    { key: 'D', label: "same-headers ceiling, A's answer", path: answers.precomputed.path, start: ceiling },
    { key: "D'", label: "same-headers ceiling, B's answer", path: answers.live.path, start: ceiling },
  ];
  function serveWith(quiet) {
    return (nodeFlags, wrap) => startServe(site, { quiet: quiet !== null, nodeFlags, wrap });
  }
  console.log(
    `\ninstructions per request (valgrind --tool=callgrind, user space; ${warmup} requests to warm up, then ${requests} counted over ${connections} connection(s)):`,
  );
  console.log(`${''.padEnd(46)}main thread  other threads`);
  const counts = {};
  for (const kind of kinds.filter((k) => !only || only.includes(k.key))) {
    const { main, others } = await countOne(kind, { dir, warmup, requests, connections });
    counts[kind.key] = main;
    console.log(`  ${kind.key.padEnd(3)} ${kind.label.padEnd(40)} ${thousands(main)} ${thousands(others)}`);
  }
  const ratio = (ceilingKey, key) => counts[ceilingKey] / counts[key];
  const goals = [
    ['A', 'D', 0.9, 'precomputed page against the ceiling'],
    ['B', "D'", 0.75, 'live page against the ceiling'],
    ['BD', "D'", 0.75, 'never-seen live page against the ceiling'],
    ['AL', 'A', 0.9, 'the request log, precomputed page'],
    ['BL', 'B', 0.9, 'the request log, live page'],
  ];
  console.log("ratios (the main thread's instructions of the column / of the row: the row's req/s, were the main thread the bound):");
  for (const [row, column, goal, what] of goals) {
    if (!counts[row] || !counts[column]) continue;
    const r = ratio(column, row);
    console.log(`  ${`${row} / ${column}`.padEnd(9)} ${r.toFixed(2)}  goal >= ${goal}: ${r >= goal ? 'ok' : 'MISSED'}  (${what})`);
  }
  return counts;
}

/** Serve's answers to the two queries (the ceiling sends these bytes with these headers). */
async function probeAnswers(site, queries) {
  const probe = await startServe(site, {});
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

async function countOne(kind, { dir, warmup, requests, connections }) {
  const out = join(dir, `callgrind.${kind.key.replace("'", 'p')}`);
  const wrap = [VALGRIND, '--tool=callgrind', '--separate-threads=yes', '--instr-atstart=no', `--callgrind-out-file=${out}.%p`, `--log-file=${out}.log`];
  const server = await kind.start([], wrap);
  try {
    let next = 0;
    const path = () => (kind.distinct ? `${kind.path}&n=${next++}` : kind.path);
    await send(server.url, path, warmup, connections);
    control(server.pid, '-i', 'on');
    control(server.pid, '-z');
    await send(server.url, path, requests, connections);
    control(server.pid, '-d');
    // One file per thread: `-01` is the main thread, which runs the JavaScript and answers.
    const prefix = `callgrind.${kind.key.replace("'", 'p')}.${server.pid}.1-`;
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
    return { main: main / requests, others: others / requests };
  } finally {
    await stop(server.child);
  }
}

function control(pid, ...args) {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });
}

/** `count` GETs of `path()` over `connections` keep-alive connections, each answered 200 and read whole. */
async function send(url, path, count, connections) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let left = count;
  const loop = async () => {
    while (left > 0) {
      left--;
      await new Promise((resolve, reject) => {
        get(`${url}${path()}`, { agent }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
          res.on('data', () => {});
          res.on('end', resolve);
        }).on('error', reject);
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, loop));
  } finally {
    agent.destroy();
  }
}

const thousands = (n) => Math.round(n).toLocaleString('en-US').padStart(12);
