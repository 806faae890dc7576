// Where the answering threads' waits for a CPU come from, by Linux's scheduler events (`perf sched`,
// which needs root or kernel.perf_event_paranoid <= -1): each time an answering thread was put
// back on a CPU, how long it had waited in the run queue (since it was woken, or since it was
// preempted), and what the CPUs ran meanwhile, by kind of thread. A latency that the thread's own
// work cannot explain is one of these waits.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { which } from './load.mjs';
import { treeThreads } from './machine.mjs';

const KERNEL = /^(kworker|ksoftirqd|kdamond|kswapd|migration|rcu|jbd2|irq\/|writeback|khugepaged|kcompactd)/;

/** Why scheduler events cannot be recorded here, or null when they can. */
export function schedUnavailable() {
  if (!which('perf')) return 'perf is not installed (apt-get install -y linux-perf)';
  try {
    execFileSync('perf', ['sched', 'record', '-o', '/dev/null', '--', 'true'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'perf cannot record scheduler events (run as root, or sysctl kernel.perf_event_paranoid=-1)';
  }
}

/** Records every CPU's scheduler events into `file` for `seconds`; resolves when done. */
export function recordSched(file, seconds) {
  return new Promise((resolve, reject) => {
    const child = spawn('perf', ['sched', 'record', '-a', '-o', file, '--', 'sleep', String(seconds)], {
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`perf sched record exited with ${code}`))));
  });
}

/**
 * The threads of a process tree, from now until stop() (looked at every 100 ms, so that a thread
 * that lives a second, a reload's reading thread, is seen): `answering` (each process's main
 * thread), `lowest` (those at nice 19: the composing and reading threads), `processes` (its pids:
 * a thread of theirs that ended before it was seen is still counted as theirs) and `all`.
 */
export function followThreads(pid) {
  const [all, answering, lowest, processes] = [new Set(), new Set(), new Set(), new Set()];
  const look = () => {
    for (const t of treeThreads(pid)) {
      all.add(t.tid);
      processes.add(t.process);
      if (t.tid === t.process) answering.add(t.tid);
      if (niceOf(t) === 19) lowest.add(t.tid);
    }
  };
  look();
  const timer = setInterval(look, 100);
  return {
    stop() {
      clearInterval(timer);
      look();
      // With worker processes, the primary only hands out connections: its workers answer.
      if (answering.size > 1) answering.delete(String(pid));
      return { answering, lowest, processes, all };
    },
  };
}

/** The thread ids of a process tree now (see followThreads). */
export function threadsOf(pid) {
  return followThreads(pid).stop();
}

function niceOf({ process, tid }) {
  try {
    const stat = readFileSync(`/proc/${process}/task/${tid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return undefined;
  }
}

/**
 * The answering threads' waits in `file`: { switches, over1, over5, max, p99, waitedMs, ranMs,
 * cpu: ms run by kind over the window, during: ms run by kind while an answering thread waited over 1 ms }.
 */
export function summarizeSched(file, { answering, lowest = new Set(), processes = new Set(), all }) {
  const text = execFileSync('perf', ['sched', 'timehist', '--state', '-i', file], {
    encoding: 'latin1',
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const kind = (name, tid, pid) =>
    answering.has(tid)
      ? 'answering threads'
      : lowest.has(tid)
        ? "serve's nice-19 threads (composing, reading a reloaded site)"
        : all.has(tid) || processes.has(pid)
          ? "serve's other threads (V8's compiler and GC helpers, libuv)"
          : name === 'wrk'
            ? 'the load generator (wrk)'
            : name === '<idle>'
              ? 'idle'
              : KERNEL.test(name)
                ? 'the kernel (kworker, ksoftirqd, ...)'
                : `other (${name})`;
  const runs = [];
  const waits = [];
  const longRuns = [];
  const blocked = [];
  const lastState = new Map();
  for (const line of text.split('\n')) {
    const m = /^\s*([\d.]+)\s+\[(\d+)\]\s+(.*?)\[([\d/]+)\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)/.exec(line);
    if (!m) continue;
    // [tid/pid] for a process's other threads, [tid] for its main thread.
    const [tid, pid = tid] = m[4].split('/');
    const [end, ran] = [Number(m[1]) * 1000, Number(m[7])];
    runs.push({ start: end - ran, end, kind: kind(m[3].trim(), tid, pid) });
    if (!answering.has(tid)) continue;
    // Preempted (state R at its last switch-out): its wait time was all in the run queue; else since its wakeup.
    const before = lastState.get(tid);
    const waited = before === 'R' ? Number(m[5]) : Number(m[6]);
    lastState.set(tid, m[8]);
    waits.push({ from: end - ran - waited, to: end - ran, waited });
    longRuns.push(ran);
    // Switched out in D (uninterruptible: a page fault's I/O, a kernel lock): off the CPU until woken.
    if (before === 'D') blocked.push(Number(m[5]) - Number(m[6]));
  }
  const cpu = {};
  for (const r of runs) cpu[r.kind] = (cpu[r.kind] ?? 0) + (r.end - r.start);
  const during = {};
  const long = waits.filter((w) => w.waited > 1).sort((a, b) => a.from - b.from);
  runs.sort((a, b) => a.start - b.start);
  let first = 0;
  for (const w of long) {
    while (first < runs.length && runs[first].end < w.from - 1000) first++;
    for (let i = first; i < runs.length && runs[i].start < w.to; i++) {
      const overlap = Math.min(runs[i].end, w.to) - Math.max(runs[i].start, w.from);
      if (overlap > 0) during[runs[i].kind] = (during[runs[i].kind] ?? 0) + overlap;
    }
  }
  const sorted = waits.map((w) => w.waited).sort((a, b) => a - b);
  return {
    switches: sorted.length,
    over1: long.length,
    over5: sorted.filter((x) => x > 5).length,
    max: sorted.at(-1) ?? 0,
    p99: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
    waitedMs: sorted.reduce((a, b) => a + b, 0),
    ranMs: cpu['answering threads'] ?? 0,
    longestRuns: longRuns.sort((a, b) => b - a).slice(0, 5),
    blockedMs: blocked.reduce((a, b) => a + b, 0),
    blockedMax: Math.max(0, ...blocked),
    cpu,
    during,
  };
}

/** The summary as lines to print. */
export function schedLines(s, seconds) {
  const share = (table) => {
    const total = Object.values(table).reduce((a, b) => a + b, 0) || 1;
    return Object.entries(table)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${Math.round((100 * v) / total)}%`)
      .join(', ');
  };
  return [
    `the answering threads, by perf sched (${seconds} s, every CPU): ran ${(s.ranMs / 1000).toFixed(2)} s, waited ${(s.waitedMs / 1000).toFixed(2)} s for a CPU over ${s.switches} returns to one;` +
      ` waits p99 ${s.p99.toFixed(2)} ms, ${s.over1} over 1 ms, ${s.over5} over 5 ms, the longest ${s.max.toFixed(2)} ms`,
    `  their longest runs without a switch (their own work: JavaScript, GC, a system call): ${s.longestRuns.map((x) => x.toFixed(1)).join(', ')} ms;` +
      ` blocked in the kernel (state D) ${s.blockedMs.toFixed(1)} ms in all, the longest ${s.blockedMax.toFixed(1)} ms`,
    `  the CPUs ran (the whole window): ${share(s.cpu)}`,
    `  the CPUs ran while an answering thread waited over 1 ms: ${share(s.during)}`,
  ];
}
