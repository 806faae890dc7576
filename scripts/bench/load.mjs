// The load generator of the server benchmarks: Debian's wrk (C, one thread, epoll), which a
// Node server on loopback cannot saturate; autocannon (a Node process on the same cores, which
// saturates before the server does) only when wrk is missing or asked for, and then said loudly.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** wrk's Lua hook: the run's figures as one line of JSON (latencies in µs). */
const WRK_REPORT = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK-JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
`;

/** The path of `name` on PATH, or null. */
export function which(name) {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** `command args` run on the CPUs `cpus` (taskset's list syntax) when given. */
export function pinned(cpus, command, args) {
  return cpus ? ['taskset', ['-c', cpus, command, ...args]] : [command, args];
}

/**
 * A load function: `load(url, { duration, connections })` resolves to requests/s, p50 and p99
 * (ms), the request count, the seconds measured and the CPU the load generator used (1 = a whole
 * CPU; wrk only); it throws on any error response, socket error or timeout.
 * `tool`: 'wrk' or 'autocannon'; `cpus`: where wrk runs (taskset), if anywhere in particular.
 */
export async function loader(tool, cpus) {
  if (tool === 'autocannon') {
    const { default: autocannon } = await import('autocannon');
    return {
      describe:
        'autocannon (FALLBACK: a Node process on the same cores; it saturates before the server does, so these figures understate the servers)',
      close() {},
      async load(url, { duration, connections }) {
        const cpu = process.cpuUsage(); // autocannon runs in this process
        const r = await autocannon({ url, connections, duration, pipelining: 1 });
        const used = process.cpuUsage(cpu);
        if (r.non2xx || r.errors || r.timeouts)
          throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
        return {
          rps: r.requests.average,
          p50: r.latency.p50,
          p99: r.latency.p99,
          max: r.latency.max,
          requests: r.requests.total,
          seconds: r.duration,
          loaderCpu: (used.user + used.system) / 1e6 / r.duration,
        };
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'cities-bench-wrk-'));
  const script = join(dir, 'report.lua');
  writeFileSync(script, WRK_REPORT);
  let scripts = 0;
  const version = /wrk \S+/.exec(run('wrk', ['--version']).out)?.[0] ?? 'wrk';
  return {
    describe: `${version}, 1 thread${cpus ? `, pinned to CPU ${cpus} (taskset)` : ''}`,
    close: () => rmSync(dir, { recursive: true, force: true }),
    /** `lua`: more of wrk's script, e.g. a `request` function making each request's target. */
    async load(url, { duration, connections, lua }) {
      let hooks = script;
      if (lua) writeFileSync((hooks = join(dir, `hooks-${++scripts}.lua`)), `${lua}\n${WRK_REPORT}`);
      const [command, args] = pinned(cpus, 'wrk', [
        '-t1',
        `-c${connections}`,
        `-d${duration}s`,
        '--timeout',
        '10s',
        '-s',
        hooks,
        url,
      ]);
      // bash's `times` prints the CPU its children used: how busy wrk itself was.
      const { out, code } = await runAsync('bash', [
        '-c',
        '"$@"; status=$?; times; exit $status',
        'bash',
        command,
        ...args,
      ]);
      const line = /^WRK-JSON (.*)$/m.exec(out);
      if (code !== 0 || !line) throw new Error(`wrk ${url} failed (exit ${code}):\n${out}`);
      const r = JSON.parse(line[1]);
      const errors = r.connect + r.read + r.write + r.status + r.timeout;
      if (errors)
        throw new Error(
          `${url}: ${r.status} error statuses, ${r.connect}/${r.read}/${r.write} connect/read/write errors, ${r.timeout} timeouts`,
        );
      const seconds = r.duration_us / 1e6;
      const times = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(out.trimEnd());
      const loaderCpu = times
        ? (60 * times[1] + Number(times[2]) + 60 * times[3] + Number(times[4])) / seconds
        : undefined;
      return {
        rps: r.requests / seconds,
        p50: r.p50_us / 1000,
        p99: r.p99_us / 1000,
        max: r.max_us / 1000,
        requests: r.requests,
        seconds,
        loaderCpu,
      };
    },
  };
}

function run(command, args) {
  try {
    return { out: execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }), code: 0 };
  } catch (error) {
    return { out: `${error.stdout ?? ''}${error.stderr ?? ''}`, code: error.status ?? 1 };
  }
}

function runAsync(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ out, code }));
  });
}

/** Which load generator to use: `wanted` ('wrk', 'autocannon' or undefined: wrk when present). */
export function chooseTool(wanted) {
  if (wanted === 'autocannon') return 'autocannon';
  if (which('wrk')) return 'wrk';
  if (wanted === 'wrk')
    throw new Error(
      'wrk is not installed: apt-get install -y wrk (or pass --loader autocannon, whose figures understate the servers)',
    );
  console.error(
    `\n${'!'.repeat(100)}\n!! wrk is not installed (apt-get install -y wrk): loading with autocannon instead, a Node process on\n!! the same cores that saturates before the servers do. These figures measure autocannon as much as the servers.\n${'!'.repeat(100)}\n`,
  );
  return 'autocannon';
}

/** A wrk script asking `path` with `&n=` and a number never sent before (another range each call): every answer computed. */
export function distinctLua(path) {
  distinctLua.from = (distinctLua.from ?? 0) + 10_000_000;
  return `local n = ${distinctLua.from}\nrequest = function()\n  n = n + 1\n  return wrk.format(nil, "${path}&n=" .. n)\nend`;
}
