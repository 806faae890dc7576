#!/usr/bin/env node
// npm run bench: requests/s and p99 of `cities-api serve` against what the same answers cost
// elsewhere, all in one run, on loopback, loaded by wrk (autocannon only as a loud fallback):
//   A  serve, a precomputed page             D  the same-headers ceiling: a minimal node:http server
//   B  serve, a live (computed) page            sending the same bytes with the exact headers serve
//   C  a minimal node:http server sending       sends, one flat array to writeHead (D: the precomputed
//      the precomputed page's bytes with        page's; D' the live page's)
//      two headers (type, length)            E  nginx serving the site's file with the config
//                                               `cities-api config nginx` generates
// Rounds are interleaved (A B C D D' E, A B C ...) and each figure is the median of the rounds,
// so a neighbour's burst hits every server alike. AL and BL are A and B from a serve with its
// default request log (no --quiet); A2, B2, AL2 and BL2 the same on a second serve of each kind
// (two identical serves differ by up to ~15 %: the log's cost is read from both). BD is B with a query never asked before each time (an extra
// `&n=` parameter): computed, never from the answer cache. Goals: A >= 0.9 D, B and BD >= 0.75 D',
// AL+AL2 >= 0.9 A+A2, BL+BL2 >= 0.9 B+B2.
// Then serve at 140k cities (see bench/at-scale.mjs); or, with --profile, only where serve's
// time goes (see bench/profile-serve.mjs); or, with --instructions, only what one request costs in
// instructions, the same on a busy machine as on a quiet one (see bench/instructions.mjs).
//
//   node scripts/bench-server.mjs [--duration S] [--rounds N] [--connections N] [--static QUERY]
//     [--live QUERY] [--data FILE] [--loader wrk|autocannon] [--pin auto|off|L:S]
//     [--max-load X] [--wait-load S] [--skip-large] [--large-data FILE] [--large-live QUERY]
//     [--profile] [--profile-duration S] [--profile-interval US] [--profile-dir DIR]
//     [--instructions] [--instructions-requests N] [--instructions-top N] [--instructions-kinds A,B,...]
//     [--compare-env NAME=VALUE]
// --compare-env NAME=VALUE: only A, B and BD, each beside the same row on serves started with that
// environment variable set (A~, B~, BD~), interleaved, and each pair's ratio (~ / without, the
// median of the rounds' ratios): what a setting read from the environment costs, e.g.
// CITIES_API_ANSWERING_FLAGS=none (CONTRIBUTING).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { atScale } from './bench/at-scale.mjs';
import { chooseTool, distinctLua, loader } from './bench/load.mjs';
import { loadNow, median, placement, settle } from './bench/machine.mjs';
import { countInstructions, KINDS, VALGRIND } from './bench/instructions.mjs';
import { profileServe } from './bench/profile-serve.mjs';
import { CEILING_GOALS, LOG_GOAL, LOG_PAIRS } from './bench/server-goals.mjs';
import {
  answerOf,
  buildSite,
  cpuSeconds,
  freePort,
  minimalHeaders,
  NGINX,
  ownHeaders,
  ROOT,
  startNginx,
  startServe,
  startSmallServer,
  stop,
} from './bench/servers.mjs';

const { values: opts } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, 'data/cities.csv') },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    static: { type: 'string', default: 'ordering=name_en&page=2' },
    live: { type: 'string', default: 'page_size=7&page=3' },
    'page-sizes': { type: 'string', default: '10,20,50,100' },
    collation: { type: 'string', default: 'locale' },
    loader: { type: 'string' },
    pin: { type: 'string', default: 'off' },
    'max-load': { type: 'string', default: '1.5' },
    'wait-load': { type: 'string', default: '300' },
    'large-data': { type: 'string', default: join(ROOT, 'bench-data', 'cities-140k.json') },
    'large-live': { type: 'string', default: 'ordering=-name_ar&page_size=7&page=15000' },
    'large-static': { type: 'string', default: 'ordering=name_en&page_size=100&page=700' },
    'skip-large': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'profile-duration': { type: 'string', default: '10' },
    'profile-interval': { type: 'string', default: '200' },
    'profile-dir': { type: 'string', default: join(ROOT, 'bench-data', 'profiles') },
    instructions: { type: 'boolean', default: false },
    'instructions-requests': { type: 'string', default: '3000' },
    'instructions-top': { type: 'string', default: '0' },
    'instructions-kinds': { type: 'string' },
    'compare-env': { type: 'string' },
  },
});
for (const name of [
  'duration',
  'rounds',
  'connections',
  'wait-load',
  'profile-duration',
  'profile-interval',
  'instructions-requests',
]) {
  if (!/^[1-9]\d*$/.test(opts[name])) {
    console.error(`bench: --${name} must be a positive integer, not ${opts[name]}`);
    process.exit(2);
  }
}
if (opts.instructions && !existsSync(VALGRIND)) {
  console.error(`bench: --instructions counts with valgrind, and ${VALGRIND} is missing: apt-get install -y valgrind`);
  process.exit(2);
}
if (!/^\d+$/.test(opts['instructions-top'])) {
  console.error(`bench: --instructions-top must be a whole number, not ${opts['instructions-top']}`);
  process.exit(2);
}
const unknownKinds = opts['instructions-kinds']?.split(',').filter((kind) => !KINDS.includes(kind));
if (unknownKinds?.length) {
  console.error(`bench: --instructions-kinds: no kind ${unknownKinds.join(', ')}; the kinds are ${KINDS.join(',')}`);
  process.exit(2);
}
const compareEnv = opts['compare-env'] && /^([A-Za-z_]\w*)=(.*)$/s.exec(opts['compare-env']);
if (opts['compare-env'] !== undefined && !compareEnv) {
  console.error(`bench: --compare-env must be NAME=VALUE, not ${opts['compare-env']}`);
  process.exit(2);
}
const duration = Number(opts.duration);
const connections = Number(opts.connections);

const cpus = placement(opts.pin);
const tool = chooseTool(opts.loader);
const generator = await loader(tool, cpus.loader);
// Instruction counts too wait for a quiet machine: what they count depends on how far V8's
// compiler threads got in the pauses (bench/instructions.mjs), and on a busy machine they get less
// done (BD counted 163,655 a request while a CI run took both CPUs, 113,964 on a quiet machine).
const load = await settle(Number(opts['max-load']), Number(opts['wait-load']));
console.log(`${availableParallelism()} CPUs, node ${process.version}; ${load.line}`);
console.log(`load generator: ${generator.describe}; ${connections} connections`);
console.log(cpus.line);

const work = mkdtempSync(join(tmpdir(), 'cities-bench-'));
const running = [];
try {
  const site = join(work, 'site');
  buildSite(['--data', opts.data, '--site', site, '--page-sizes', opts['page-sizes'], '--collation', opts.collation]);
  if (opts.instructions) {
    await countInstructions({
      site,
      queries: { precomputed: opts.static, live: opts.live },
      dir: join(work, 'callgrind'),
      warmup: 20000,
      requests: Number(opts['instructions-requests']),
      top: Number(opts['instructions-top']),
      only: opts['instructions-kinds']?.split(','),
    });
  } else if (opts.profile) {
    await profileServe({
      site,
      queries: { precomputed: opts.static, live: opts.live },
      generator,
      cpus,
      connections,
      ...profileOptions(),
    });
  } else if (compareEnv) {
    await compareWithEnv(site, { [compareEnv[1]]: compareEnv[2] });
  } else {
    await compare(site);
    if (!opts['skip-large'])
      await atScale({
        work,
        generator,
        cpus,
        duration,
        connections,
        data: opts['large-data'],
        live: opts['large-live'],
        static: opts['large-static'],
      });
  }
} finally {
  for (const server of running) await (server.stop?.() ?? stop(server.child));
  generator.close();
  rmSync(work, { recursive: true, force: true });
}

function profileOptions() {
  return {
    duration: Number(opts['profile-duration']),
    interval: Number(opts['profile-interval']),
    dir: opts['profile-dir'],
  };
}

async function compare(site) {
  const serve = await startServe(site, { cpus: cpus.server });
  running.push(serve);
  // BD's never-seen queries in a serve of their own: A and B, which AL and BL are compared with, see only their own load.
  const computing = await startServe(site, { cpus: cpus.server });
  running.push(computing);
  const logging = await startServe(site, { cpus: cpus.server, quiet: false });
  running.push(logging);
  // Two identical serves differ by up to ~15 % in req/s (the JIT's choices, memory layout): the
  // log's cost is read from two serves of each kind, and the spread of the quiet pair is shown.
  const serve2 = await startServe(site, { cpus: cpus.server });
  running.push(serve2);
  const logging2 = await startServe(site, { cpus: cpus.server, quiet: false });
  running.push(logging2);
  const paths = { precomputed: `/cities/?${opts.static}`, live: `/cities/?${opts.live}` };
  const answers = {};
  for (const [kind, path] of Object.entries(paths)) {
    const answer = await answerOf(`${serve.url}${path}`);
    if (answer.status !== 200) throw new Error(`serve answered ${answer.status} to ${path}`);
    answers[kind] = { path, body: answer.body, headers: ownHeaders(answer.rawHeaders) };
  }
  const { precomputed, live } = answers;
  const minimal = await startSmallServer([{ ...precomputed, headers: minimalHeaders(precomputed.body) }], {
    label: 'minimal server',
    cpus: cpus.server,
  });
  running.push(minimal);
  const ceiling = await startSmallServer([precomputed, live], { label: 'same-headers ceiling', cpus: cpus.server });
  running.push(ceiling);
  const nginx = existsSync(NGINX)
    ? await startNginx(join(work, 'nginx'), site, { cpus: cpus.server, port: await freePort(), liveUrl: serve.url })
    : undefined;
  if (nginx) running.push(nginx);
  else console.error(`\n!! ${NGINX} is missing (apt-get install -y nginx-light): E, nginx, is left out of this run\n`);
  const targets = [
    {
      key: 'A',
      label: `serve, precomputed page (?${opts.static})`,
      server: serve,
      url: serve.url,
      answer: precomputed,
    },
    { key: 'B', label: `serve, live page (?${opts.live})`, server: serve, url: serve.url, answer: live },
    {
      key: 'BD',
      label: 'B, each query new (&n=1, 2, ...: all computed)',
      server: computing,
      url: computing.url,
      answer: live,
      lua: () => distinctLua(live.path),
    },
    {
      key: 'AL',
      label: 'A with the default request log (no --quiet)',
      server: logging,
      url: logging.url,
      answer: precomputed,
    },
    { key: 'BL', label: 'B with the default request log', server: logging, url: logging.url, answer: live },
    { key: 'A2', label: 'A on a second serve', server: serve2, url: serve2.url, answer: precomputed },
    { key: 'B2', label: 'B on a second serve', server: serve2, url: serve2.url, answer: live },
    { key: 'AL2', label: 'AL on a second serve', server: logging2, url: logging2.url, answer: precomputed },
    { key: 'BL2', label: 'BL on a second serve', server: logging2, url: logging2.url, answer: live },
    {
      key: 'C',
      label: 'minimal node:http, same bytes as A, 2 headers',
      server: minimal,
      url: minimal.url,
      answer: precomputed,
    },
    {
      key: 'D',
      label: "same-headers ceiling: A's bytes and headers",
      server: ceiling,
      url: ceiling.url,
      answer: precomputed,
    },
    {
      key: "D'",
      label: "same-headers ceiling: B's bytes and headers",
      server: ceiling,
      url: ceiling.url,
      answer: live,
    },
    ...(nginx
      ? [
          {
            key: 'E',
            label: 'nginx, the site file, generated config',
            server: nginx,
            url: nginx.url,
            answer: precomputed,
          },
        ]
      : []),
  ];
  console.log(`\nanswers (checked before loading: status 200, the same body bytes as serve's):`);
  for (const target of targets) {
    const got = await answerOf(`${target.url}${target.answer.path}`);
    if (got.status !== 200 || !got.body.equals(target.answer.body))
      throw new Error(
        `${target.label}: ${got.status}, ${got.body.length} bytes, not serve's ${target.answer.body.length}`,
      );
    console.log(
      `  ${target.key.padEnd(3)} ${target.label.padEnd(50)} ${got.body.length} bytes; ${headerNote(ownHeaders(got.rawHeaders), target.answer.headers)}`,
    );
  }
  printResults(await measure(targets));
  for (const server of running.splice(0)) await (server.stop?.() ?? stop(server.child));
}

/** Each target loaded in interleaved rounds (after a warm-up each): its medians, and each round's req/s and req per CPU-s. */
async function measure(targets) {
  for (const target of targets)
    await generator.load(`${target.url}${target.answer.path}`, { duration: 2, connections, lua: target.lua?.() }); // warm-up: JIT, caches
  const runs = targets.map(() => []);
  for (let round = 0; round < Number(opts.rounds); round++) {
    // Each round starts one row later: no row always follows the same neighbour's load.
    for (let k = 0; k < targets.length; k++) {
      const i = (k + round) % targets.length;
      const target = targets[i];
      const cpu = cpuSeconds(target.server.pid);
      const run = await generator.load(`${target.url}${target.answer.path}`, {
        duration,
        connections,
        lua: target.lua?.(),
      });
      runs[i].push({ ...run, serverCpu: (cpuSeconds(target.server.pid) - cpu) / run.seconds });
    }
  }
  const mid = (rs, field) => (rs.some((r) => r[field] === undefined) ? undefined : median(rs.map((r) => r[field])));
  const results = Object.fromEntries(
    targets.map((target, i) => {
      const rs = runs[i].map((r) => ({ ...r, perCpu: r.rps / r.serverCpu }));
      return [
        target.key,
        {
          ...target,
          rps: mid(rs, 'rps'),
          p99: mid(rs, 'p99'),
          serverCpu: mid(rs, 'serverCpu'),
          loaderCpu: mid(rs, 'loaderCpu'),
          perCpu: mid(rs, 'perCpu'),
          all: rs.map((r) => r.rps),
          allPerCpu: rs.map((r) => r.perCpu),
        },
      ];
    }),
  );
  return results;
}

/**
 * A, B and BD against the same rows on serves started with `env` in their environment (A~, B~,
 * BD~), interleaved: each figure, and each pair's ratio (~ / without) by req/s and by req per
 * CPU-second, the median of the rounds' ratios (a neighbour's burst hits a round's runs alike).
 */
async function compareWithEnv(site, env) {
  const said = Object.entries(env)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  const pairs = [];
  for (const variant of [{}, env]) {
    // A and B on one serve, BD's never-seen queries on one of their own (as in compare()).
    const serve = await startServe(site, { cpus: cpus.server, env: variant });
    const computing = await startServe(site, { cpus: cpus.server, env: variant });
    running.push(serve, computing);
    pairs.push({ serve, computing, mark: variant === env ? '~' : '' });
  }
  const paths = { precomputed: `/cities/?${opts.static}`, live: `/cities/?${opts.live}` };
  const answers = {};
  for (const [kind, path] of Object.entries(paths)) {
    const answer = await answerOf(`${pairs[0].serve.url}${path}`);
    if (answer.status !== 200) throw new Error(`serve answered ${answer.status} to ${path}`);
    answers[kind] = { path, body: answer.body };
  }
  const targets = pairs.flatMap(({ serve, computing, mark }) => {
    const label = (key, what) => (mark ? `${key} with ${said}` : what);
    return [
      { key: `A${mark}`, label: label('A', 'serve, precomputed page'), server: serve, answer: answers.precomputed },
      { key: `B${mark}`, label: label('B', 'serve, live page'), server: serve, answer: answers.live },
      {
        key: `BD${mark}`,
        label: label('BD', 'B, each query new (&n=1, 2, ...: all computed)'),
        server: computing,
        answer: answers.live,
        lua: () => distinctLua(answers.live.path),
      },
    ].map((target) => ({ ...target, url: target.server.url }));
  });
  for (const target of targets) {
    const got = await answerOf(`${target.url}${target.answer.path}`);
    if (got.status !== 200 || !got.body.equals(target.answer.body))
      throw new Error(`${target.label}: ${got.status}, ${got.body.length} bytes, not serve's`);
  }
  const results = await measure(targets);
  printTable(results);
  const ratio = (key, field) =>
    median(results[`${key}~`][field].map((variant, round) => variant / results[key][field][round]));
  console.log(`
${said} / without, the median of the rounds' ratios:`);
  for (const key of ['A', 'B', 'BD'])
    console.log(
      `  ${`${key}~ / ${key}`.padEnd(10)} req/s ${ratio(key, 'all').toFixed(3)}   req per CPU-s ${ratio(key, 'allPerCpu').toFixed(3)}`,
    );
  for (const server of running.splice(0)) await (server.stop?.() ?? stop(server.child));
}

/** A share of one CPU, as a percentage. */
function percent(x) {
  return x === undefined ? '   ?' : `${(100 * x).toFixed(0).padStart(3)}%`;
}

/** Each row's medians and each round's req/s. */
function printTable(results) {
  console.log(
    `\nmedians of ${opts.rounds} interleaved rounds of ${duration} s, ${connections} connections, loopback; load average now ${loadNow()}`,
  );
  console.log(`${''.padEnd(56)}   req/s      p99  server CPU  ${tool} CPU  req per CPU-s  req/s of each round`);
  for (const r of Object.values(results)) {
    console.log(
      `  ${r.key.padEnd(3)} ${r.label.padEnd(50)} ${String(Math.round(r.rps)).padStart(7)} ${r.p99.toFixed(2).padStart(6)} ms    ${percent(r.serverCpu)}      ${percent(r.loaderCpu)}   ${String(Math.round(r.perCpu)).padStart(12)}  ${r.all.map((x) => Math.round(x)).join(', ')}`,
    );
  }
}

function printResults(results) {
  printTable(results);
  const saturated = Object.values(results)
    .filter((r) => r.loaderCpu >= 0.9)
    .map((r) => r.key);
  const starved = Object.values(results)
    .filter((r) => r.serverCpu < 0.9)
    .map((r) => r.key);
  console.log(
    `CPU: 100% = one whole CPU, kernel time included; req per CPU-s: requests per second of the server's own CPU time, what one request costs, whatever neighbours took.`,
  );
  if (saturated.length)
    console.log(
      `${tool} used >= 90% of a CPU for ${saturated.join(', ')}: those req/s are partly the load generator's limit.`,
    );
  if (starved.length)
    console.log(
      `the server had < 90% of a CPU for ${starved.join(', ')} (neighbours, or the load generator): compare req per CPU-s there.`,
    );
  const against = ['C', 'D', "D'", 'E'].filter((key) => results[key]);
  for (const [field, what] of [
    ['rps', 'req/s'],
    ['perCpu', 'req per CPU-s'],
  ]) {
    console.log(`\nratios of ${what} (row / column):\n${''.padEnd(30)}${against.map((k) => k.padStart(8)).join('')}`);
    for (const [key, name] of [
      ['A', 'A serve precomputed'],
      ['B', 'B serve live'],
      ['E', 'E nginx'],
    ].filter(([key]) => results[key])) {
      console.log(
        `  ${name.padEnd(28)}${against.map((k) => (results[key][field] / results[k][field]).toFixed(2).padStart(8)).join('')}`,
      );
    }
  }
  console.log('');
  for (const [key, ceilingKey, goal] of CEILING_GOALS) {
    const ratio = results[key].rps / results[ceilingKey].rps;
    const cost = results[key].perCpu / results[ceilingKey].perCpu;
    console.log(
      `goal ${key} >= ${goal} x ${ceilingKey}: ${ratio.toFixed(2)} ${ratio >= goal ? 'ok' : 'MISSED'} (per CPU-s: ${cost.toFixed(2)})`,
    );
  }
  // Paired within each round (a neighbour's burst or the machine's slow minute hits the round's
  // runs alike), both serves of each kind together, then the median over rounds; the quiet pair's
  // own ratio, read the same way, shows how far two identical serves differ.
  const paired = (top, bottom, field) =>
    median(results[top[0]][field].map((_, r) => sum(top, field, r) / sum(bottom, field, r)));
  const sum = (keys, field, r) => keys.reduce((total, key) => total + results[key][field][r], 0);
  for (const [key, quiet] of LOG_PAIRS) {
    const [logged, quiets] = [
      [key, `${key}2`],
      [quiet, `${quiet}2`],
    ];
    const ratio = paired(logged, quiets, 'all');
    const cost = paired(logged, quiets, 'allPerCpu');
    const spread = paired([`${quiet}2`], [quiet], 'all');
    console.log(
      `goal: the request log costs <= 10%: ${key}+${key}2 / ${quiet}+${quiet}2 ${ratio.toFixed(2)} ${ratio >= LOG_GOAL ? 'ok' : 'MISSED'} (per CPU-s: ${cost.toFixed(2)}; medians of the rounds' ratios; two quiet serves alike differ: ${quiet}2 / ${quiet} ${spread.toFixed(2)})`,
    );
  }
  if (tool !== 'wrk')
    console.log(
      `!! loaded by ${tool}, not wrk: these ratios are mostly the load generator's; install wrk for a verdict`,
    );
}

/** How an answer's headers compare with serve's (Date, Connection and Keep-Alive left out). */
function headerNote(got, serves) {
  const byName = (flat) => new Map(flat.flatMap((x, i) => (i % 2 ? [] : [[x.toLowerCase(), [x, flat[i + 1]]]])));
  const [g, s] = [byName(got), byName(serves)];
  const extra = [...g.keys()].filter((n) => !s.has(n)).map((n) => g.get(n)[0]);
  const other = [...g.keys()].filter((n) => s.has(n) && s.get(n)[1] !== g.get(n)[1]).map((n) => g.get(n)[0]);
  const missing = [...s.keys()].filter((n) => !g.has(n)).map((n) => s.get(n)[0]);
  if (!extra.length && !other.length && !missing.length) return `the same ${s.size} headers as serve`;
  const notes = [
    extra.length && `adds ${extra.join(', ')}`,
    other.length && `its own ${other.join(', ')}`,
    missing.length && `lacks ${missing.join(', ')}`,
  ];
  return `${g.size} headers; ${notes.filter(Boolean).join('; ')}`;
}
