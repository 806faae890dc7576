// The machine a benchmark runs on: its load (waited on, reported), its CPUs and how the load
// generator and the servers are spread over them.
import { openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { which } from './load.mjs';

const load1 = () => loadavg()[0];

/**
 * Waits (polling every 10 s, at most `waitSeconds`) for the 1-minute load average to fall under
 * `maxLoad`; returns what it was at the start and when measuring began, and how long it waited.
 */
export async function settle(maxLoad, waitSeconds) {
  const first = load1();
  const started = performance.now();
  while (load1() >= maxLoad && performance.now() - started < waitSeconds * 1000) {
    console.error(`load average ${load1().toFixed(2)} >= ${maxLoad}: waiting (at most ${waitSeconds} s in all) ...`);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  }
  const now = load1();
  const waited = (performance.now() - started) / 1000;
  const note =
    now >= maxLoad
      ? `; still >= ${maxLoad} after waiting ${waited.toFixed(0)} s: figures are noisier than usual`
      : waited >= 1
        ? ` (waited ${waited.toFixed(0)} s)`
        : '';
  return {
    first,
    now,
    waited,
    line: `load average (1 min) ${now.toFixed(2)} at start${note}; ${first.toFixed(2)} when the script began`,
  };
}

export const loadNow = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/**
 * Where the load generator and the servers run: `spec` is `off` (anywhere), `auto` (on 2 or more
 * CPUs with taskset: the load generator on the first CPU, the servers on the others), or
 * `LOADER:SERVER` in taskset's list syntax (e.g. `0:1` or `0:1-3`).
 */
export function placement(spec) {
  const cpus = availableParallelism();
  if (spec === 'off')
    return {
      loader: undefined,
      server: undefined,
      line: 'not pinned: the load generator and the servers run wherever the kernel puts them',
    };
  if (!which('taskset'))
    return {
      loader: undefined,
      server: undefined,
      line: 'not pinned: taskset is missing (apt-get install -y util-linux)',
    };
  let loader;
  let server;
  if (spec === 'auto') {
    if (cpus < 2) return { loader: undefined, server: undefined, line: `not pinned: ${cpus} CPU` };
    [loader, server] = ['0', cpus === 2 ? '1' : `1-${cpus - 1}`];
  } else {
    const m = /^([\d,-]+):([\d,-]+)$/.exec(spec);
    if (!m) throw new Error(`--pin must be auto, off or LOADER:SERVER CPU lists (e.g. 0:1), not ${spec}`);
    [, loader, server] = m;
  }
  return {
    loader,
    server,
    line: `pinned with taskset: load generator on CPU ${loader}, each server (all its threads) on CPU ${server}`,
  };
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * A clock of the CPU time this process's main thread has run (ms), from Linux's schedstat (ns):
 * what a wall-clock gap of the event loop cannot tell apart, work on the thread or the thread
 * waiting for a CPU (a shared machine). Null where /proc has no schedstat.
 */
export function mainThreadCpu() {
  let fd;
  try {
    fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
  } catch {
    return null;
  }
  const buffer = Buffer.alloc(128);
  return () => {
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    return Number(buffer.toString('latin1', 0, n).split(' ')[0]) / 1e6;
  };
}

/**
 * What a process and its descendants' threads did (ms, Linux schedstat): `ran`, and `waited` in
 * the run queue for a CPU; `mainRan` and `mainWaited` are their processes' main threads' (serve's
 * answering threads). Null where /proc has no schedstat. A latency the thread's own work cannot explain
 * shows here as waiting: a machine with more runnable threads than CPUs.
 */
export function schedOf(pid) {
  if (readText(`/proc/${pid}/task/${pid}/schedstat`) === null) return null;
  const figures = { ran: 0, waited: 0, mainRan: 0, mainWaited: 0 };
  for (const { process, tid } of treeThreads(pid)) {
    const [ran, waited] = (readText(`/proc/${process}/task/${tid}/schedstat`) ?? '0 0').split(' ').map(Number);
    figures.ran += ran / 1e6;
    figures.waited += waited / 1e6;
    if (tid === String(process))
      [figures.mainRan, figures.mainWaited] = [figures.mainRan + ran / 1e6, figures.mainWaited + waited / 1e6];
  }
  return figures;
}

/** Every thread of a process and its descendants (Linux /proc): `{ process, tid }`, each process's main thread among them. */
export function treeThreads(pid) {
  const threads = [];
  const visit = (p) => {
    let tasks;
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const tid of tasks) {
      threads.push({ process: String(p), tid });
      for (const child of (readText(`/proc/${p}/task/${tid}/children`) ?? '').split(' ').filter(Boolean)) visit(child);
    }
  };
  visit(pid);
  return threads;
}

function readText(path) {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return null;
  }
}

/** Megabytes written by any process that the kernel has not yet put on disk (Linux's Dirty + Writeback), or null. */
export function unwrittenMb() {
  try {
    const info = readFileSync('/proc/meminfo', 'latin1');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(info)?.[1] ?? 0);
    return Math.round((kb('Dirty') + kb('Writeback')) / 1024);
  } catch {
    return null;
  }
}
