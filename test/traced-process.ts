import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';

// A process traced by strace from its first instruction, yet our own child: it stops itself before
// it execs the command (its pid, which names its drafts, known), strace attaches to it (`-p`), then
// it goes on. Its exit code is ours to read and signals go to it, not to strace (which, killed,
// would let it run on untraced).

export const STRACE = '/usr/bin/strace';

/** `/proc/PID/status`'s field, '' once the process is gone. */
function statusOf(pid: number, field: string): string {
  try {
    return new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
  } catch {
    return '';
  }
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 10));
}

/**
 * `command args` started under `strace -f -qq -p PID` with the arguments `straceArgs(pid)` gives
 * (none: not traced); `tracer` resolves once strace has ended (after the process).
 */
export async function tracedSpawn(
  command: string,
  args: readonly string[],
  straceArgs: ((pid: number) => string[]) | undefined,
  options: SpawnOptions = {},
): Promise<{ child: ChildProcess; tracer: Promise<unknown> }> {
  const child = spawn('/bin/sh', ['-c', 'kill -STOP $$; exec "$@"', 'sh', command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
  const pid = child.pid!;
  await until(() => statusOf(pid, 'State').startsWith('T') || !statusOf(pid, 'State'));
  let tracer: Promise<unknown> = Promise.resolve();
  if (straceArgs) {
    const strace = spawn(STRACE, ['-f', '-qq', '-p', String(pid), ...straceArgs(pid)], { stdio: 'ignore' });
    tracer = new Promise((done) => strace.on('close', done));
    await until(() => statusOf(pid, 'TracerPid') !== '0' || !statusOf(pid, 'State'));
  }
  process.kill(pid, 'SIGCONT');
  return { child, tracer };
}
