import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { CitiesApiError } from '../src/core/errors.js';
import { LockBusyError } from '../src/fs/lock.js';
import { Channel, type Port, type Side, type Wire } from '../src/proc/channel.js';
import { profilingFlags, WorkerEnded } from '../src/proc/workers.js';

// The channel's protocol between two ends of a MessageChannel, as between a thread and its
// parent: calls answered or failed (the error's class and fields kept), events both ways, a
// call cancelled by its signal, what the parent sends before the worker listens, a lost end.

interface ParentSide extends Side {
  readonly calls: { ask(question: string): string };
  readonly events: { told: string };
}
interface WorkerSide extends Side {
  readonly calls: {
    double(n: number): number;
    later(n: number): Promise<number>;
    fail(kind: string): never;
    wait(): Promise<string>;
    askBack(question: string): Promise<string>;
  };
  readonly events: { step: readonly [number, number] };
}

const portOf = (port: MessagePort): Port => ({
  send: (message) => port.postMessage(message),
  receive: (listener) => port.on('message', (message: Wire) => listener(message)),
  close: () => port.close(),
});
const open: MessagePort[] = [];
afterEach(() => {
  for (const port of open.splice(0)) port.close();
});

/** A parent's end and a worker's end; the worker's answers its calls once `listen()` is called. */
function pair(errors = [LockBusyError]) {
  const { port1, port2 } = new MessageChannel();
  open.push(port1, port2);
  const parent = new Channel<ParentSide, WorkerSide>(portOf(port1), 'parent', errors);
  const listen = () => {
    const worker = new Channel<WorkerSide, ParentSide>(portOf(port2), 'worker', errors);
    worker.handle('double', (n) => 2 * n);
    worker.handle('later', async (n) => n + 1);
    worker.handle('fail', (kind) => {
      throw kind === 'lock'
        ? new LockBusyError('busy', 42, '/x/.site.lock')
        : kind === 'ours'
          ? new CitiesApiError('bad', 2, [{ reason: 'why', line: 3 }])
          : Object.assign(new Error('EACCES: denied'), { code: 'EACCES', path: '/x' });
    });
    worker.handle(
      'wait',
      (_, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('heard the abort'))),
    );
    worker.handle('askBack', (question) => worker.call('ask', question));
    return worker;
  };
  return { parent, listen };
}

describe('Channel: calls, errors, events', () => {
  it.each<[string, (parent: Channel<ParentSide, WorkerSide>) => Promise<unknown>, unknown]>([
    ['a synchronous handler', (p) => p.call('double', 21), 42],
    ['an asynchronous handler', (p) => p.call('later', 41), 42],
    ['a call answered by a call back to the parent', (p) => p.call('askBack', 'who'), 'parent heard who'],
  ])('%s: its result', async (_, call, result) => {
    const { parent, listen } = pair();
    parent.handle('ask', (question) => `parent heard ${question}`);
    listen();
    expect(await call(parent)).toEqual(result);
  });

  it.each([
    ['lock', LockBusyError, { holder: 42, lock: '/x/.site.lock', exitCode: 1 }],
    ['ours', CitiesApiError, { exitCode: 2, problems: [{ reason: 'why', line: 3 }] }],
    ['errno', Error, { code: 'EACCES', path: '/x' }],
  ])('a handler that throws (%s): the same class and fields', async (kind, type, fields) => {
    const { parent, listen } = pair();
    listen();
    const error = await parent.call('fail', kind).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject(fields);
  });

  it('an error of a class the receiving end was not given comes back as a CitiesApiError with its fields', async () => {
    const { parent, listen } = pair([]);
    listen();
    const error = await parent.call('fail', 'lock').catch((e: unknown) => e as Error);
    expect([error.constructor, { ...error }]).toEqual([CitiesApiError, expect.objectContaining({ holder: 42 })]);
  });

  it('what the parent sends before the worker listens is sent once it does, in order', async () => {
    const { parent, listen } = pair();
    const answers = [parent.call('double', 1), parent.call('later', 1), parent.call('double', 3)];
    await new Promise((resolve) => setTimeout(resolve, 20));
    listen();
    expect(await Promise.all(answers)).toEqual([2, 2, 6]);
  });

  it('events arrive in order, and before the answer of a call sent after them', async () => {
    const { parent, listen } = pair();
    const steps: (readonly [number, number])[] = [];
    parent.on('step', (step) => steps.push(step));
    const worker = listen();
    worker.handle('double', (n) => {
      for (let i = 1; i <= 3; i++) worker.emit('step', [i, 3]);
      return 2 * n;
    });
    expect(await parent.call('double', 5)).toBe(10);
    expect(steps).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it("a call's signal aborts the handler's, which decides the answer", async () => {
    const { parent, listen } = pair();
    listen();
    const stop = new AbortController();
    const answer = parent.call('wait', undefined, stop.signal);
    setTimeout(() => stop.abort(), 10);
    expect(await answer).toBe('heard the abort');
  });

  it('a call to a name the other end does not answer fails, saying so', async () => {
    const { parent, listen } = pair();
    listen();
    await expect(parent.call('nothing' as 'double', 1)).rejects.toThrow('nothing answers the call nothing');
  });

  it('the other end lost: the calls waiting and every later call fail with how it ended', async () => {
    const { parent, listen } = pair();
    listen();
    const waiting = parent.call('wait', undefined);
    const ended = new WorkerEnded('a test worker', 'stopped (exit code 1)', 1, null);
    parent.lost(ended);
    await expect(waiting).rejects.toBe(ended);
    await expect(parent.call('double', 1)).rejects.toThrow('a test worker stopped (exit code 1)');
  });
});

// A profiled serve (node --cpu-prof --cpu-prof-dir DIR) crashed at its first thread: new Worker refuses a flag's value as its own argument.
describe('profilingFlags: what a thread takes of its process flags', () => {
  it.each([
    ['none', ['--enable-source-maps'], []],
    ['--cpu-prof alone', ['--cpu-prof'], ['--cpu-prof']],
    [
      'a value as its own argument joined to its flag',
      ['--cpu-prof', '--cpu-prof-dir', '/p'],
      ['--cpu-prof', '--cpu-prof-dir=/p'],
    ],
    ['a value already joined', ['--cpu-prof', '--cpu-prof-dir=/p'], ['--cpu-prof', '--cpu-prof-dir=/p']],
    ['the interval kept', ['--cpu-prof-interval', '200', '--max-old-space-size=64'], ['--cpu-prof-interval=200']],
    [
      'no file name (every thread would write it)',
      ['--cpu-prof', '--cpu-prof-name', 'a.cpuprofile', '--cpu-prof-name=b'],
      ['--cpu-prof'],
    ],
  ])('%s', (_name, execArgv, expected) => {
    expect(profilingFlags(execArgv)).toEqual(expected);
  });

  it('a profiled process (node --cpu-prof --cpu-prof-dir DIR) loads the module and starts a thread that writes its own profile', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cities-prof-'));
    try {
      const workers = new URL('../lib/proc/workers.js', import.meta.url).href;
      const script = `const { profilingFlags } = await import(${JSON.stringify(workers)});
        const { Worker } = await import('node:worker_threads');
        const thread = new Worker('0', { eval: true, execArgv: profilingFlags(process.execArgv) });
        thread.once('exit', (code) => process.exit(code));`;
      const flags = [
        '--cpu-prof',
        '--cpu-prof-dir',
        dir,
        '--cpu-prof-interval',
        '500',
        '--cpu-prof-name',
        'main.cpuprofile',
      ];
      execFileSync(process.execPath, [...flags, '--input-type=module', '-e', script], { stdio: 'pipe' });
      // The thread's profile, and the process's own (main.cpuprofile).
      expect(readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a thread started at the lowest priority (lowest-thread.ts)', () => {
  // A module that says, as it is evaluated (its imports before it), the priority its thread runs at.
  const reporting = `data:text/javascript,${encodeURIComponent(
    "import { getPriority } from 'node:os'; import { parentPort } from 'node:worker_threads'; parentPort.postMessage(getPriority());",
  )}`;
  const bootstrap = new URL('../lib/proc/lowest-thread.js', import.meta.url);

  it.each([
    ['through lowest-thread.ts: its module and their imports load at nice 19 already', bootstrap, 19],
    ['the module alone: at the process priority', new URL(reporting), getPriority()],
  ])('%s', async (_, script, nice) => {
    if (process.platform !== 'linux') {
      if (process.env.CI === 'true') throw new Error('thread priorities are checked on Linux');
      console.warn('SKIPPED: not Linux: a thread priority is the process priority here');
      return;
    }
    const thread = new Worker(script, { argv: [reporting] });
    try {
      const seen = await new Promise((resolve, reject) => thread.once('message', resolve).once('error', reject));
      expect(seen).toBe(nice);
    } finally {
      await thread.terminate();
    }
  });
});
