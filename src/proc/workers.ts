import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { type ResourceLimits, Worker, parentPort, workerData } from 'node:worker_threads';
import { CitiesApiError, wordingOf } from '../core/errors.js';
import { Channel, type Port, type Protocol } from './channel.js';
import type { ErrorClass } from './error-data.js';

// A worker started, as a thread (worker_threads) or as a process (node:cluster, so that workers
// may share a listening port), with a Channel to it; and the worker's own end of that Channel.

// Under the tests the sources run as TypeScript; a worker always runs the compiled script, from lib/.
const entry = (module: string) =>
  new URL(import.meta.url.endsWith('.ts') ? `../../lib/${module}.js` : `../${module}.js`, import.meta.url);
// A thread takes none of this process's flags but --cpu-prof's, so a profiled process profiles its threads too.
const VALUED = ['--cpu-prof-dir', '--cpu-prof-name', '--cpu-prof-interval'];
const PROFILING = profilingFlags(process.execArgv);

/**
 * The --cpu-prof flags of `execArgv` as a thread takes them: each with its value in one argument
 * (`--cpu-prof-dir DIR` as two is refused by new Worker), without a file name (every thread would
 * write the same file: each gets Node's own, by thread id).
 */
export function profilingFlags(execArgv: readonly string[]): string[] {
  const flags: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!;
    const name = flag.split('=', 1)[0]!;
    if (!name.startsWith('--cpu-prof')) continue;
    const value = VALUED.includes(name) && !flag.includes('=') ? execArgv[++i] : undefined;
    if (name !== '--cpu-prof-name') flags.push(value === undefined ? flag : `${name}=${value}`);
  }
  return flags;
}

/** How a worker ended (killed, out of memory, crashed, or stopped): what its calls still waiting fail with. */
export class WorkerEnded extends CitiesApiError {
  constructor(
    /** What the worker was, e.g. `the build of dist`. */
    readonly worker: string,
    readonly why: string,
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {
    super(`${worker} ${why}`);
  }
}

export interface WorkerOptions {
  /** What the worker is, said in how it ended: `the build of dist`, `a writer thread`. */
  readonly name: string;
  /** The classes its errors are rebuilt as, besides CitiesApiError and the built-in ones. */
  readonly errors?: readonly ErrorClass[];
}

export interface ProcessOptions extends WorkerOptions {
  /** Node and V8 flags the process runs with, besides this one's. */
  readonly execArgv?: readonly string[];
}

export interface ThreadOptions<P extends Protocol> extends WorkerOptions {
  readonly data?: P['data'];
  readonly resourceLimits?: ResourceLimits;
  /**
   * Run at the lowest priority (lowestPriority) from its first line of JavaScript: the module and
   * its imports load at that priority too (lowest-thread.ts).
   */
  readonly lowest?: boolean;
}

/** The parent's end: the Channel, how the worker ended (once it has), and a way to stop it. */
export class WorkerChannel<P extends Protocol> extends Channel<P['parent'], P['worker']> {
  constructor(
    port: Port,
    options: WorkerOptions,
    /** Resolves (never rejects) once the worker has ended. */
    readonly ended: Promise<WorkerEnded>,
    private readonly stopWith: (signal: NodeJS.Signals) => void,
    /** The thread (tests stop it to see a thread die), or the process's id. */
    readonly worker: { readonly thread?: Worker; readonly pid?: number },
  ) {
    super(port, 'parent', options.errors);
    void ended.then((how) => this.lost(how));
  }

  /** Stops the worker (a thread is terminated, a process sent `signal`); resolves once it has ended. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<WorkerEnded> {
    this.stopWith(signal);
    return this.ended;
  }
}

/** Threads startThread() started that have not ended. */
let threads = 0;

/** How many threads startThread() started that have not ended yet (what a closed server leaves: tests). */
export function runningThreads(): number {
  return threads;
}

/** Starts `module` (a path under src/ without extension, e.g. `store/write-worker`) in a thread. */
export function startThread<P extends Protocol>(module: string, options: ThreadOptions<P>): WorkerChannel<P> {
  const script = entry(module);
  const thread = new Worker(options.lowest ? entry('proc/lowest-thread') : script, {
    ...(options.lowest && { argv: [script.href] }),
    workerData: options.data,
    execArgv: PROFILING,
    ...(options.resourceLimits && { resourceLimits: options.resourceLimits }),
  });
  threads++;
  let crash: Error | undefined;
  thread.on('error', (error) => (crash ??= error));
  const ended = new Promise<WorkerEnded>((resolve) =>
    thread.once('exit', (code) => {
      threads--;
      resolve(new WorkerEnded(options.name, why(crash, code, null), code, null));
    }),
  );
  const port: Port = {
    send: (message, transfer) => thread.postMessage(message, transfer as ArrayBuffer[] | undefined),
    receive: (listener) => thread.on('message', listener),
  };
  return new WorkerChannel<P>(port, options, ended, () => void thread.terminate(), { thread });
}

/** Starts `module` in a child process of node:cluster (workers listening on one port share it). */
export function startProcess<P extends Protocol>(module: string, options: ProcessOptions): WorkerChannel<P> {
  cluster.setupPrimary({
    exec: fileURLToPath(entry(module)),
    args: [],
    execArgv: [...process.execArgv, ...(options.execArgv ?? [])],
    serialization: 'advanced',
  });
  const child = cluster.fork();
  const ended = new Promise<WorkerEnded>((resolve) =>
    child.once('exit', (code: number | null, signal: NodeJS.Signals | null) =>
      resolve(new WorkerEnded(options.name, why(undefined, code, signal), code, signal)),
    ),
  );
  const port: Port = {
    send: (message) => void (child.isConnected() && child.send(message)),
    receive: (listener) => child.on('message', listener),
  };
  const pid = child.process.pid;
  return new WorkerChannel<P>(port, options, ended, (signal) => child.process.kill(signal), pid ? { pid } : {});
}

/** In a worker (thread or process): its end of the Channel to its parent, and the data it was started with. */
export function parentChannel<P extends Protocol>(
  errors: readonly ErrorClass[] = [],
): Channel<P['worker'], P['parent']> & { readonly data: P['data'] } {
  const port: Port | undefined = parentPort
    ? {
        send: (m, transfer) => parentPort!.postMessage(m, transfer as ArrayBuffer[] | undefined),
        receive: (l) => parentPort!.on('message', l),
        close: () => parentPort!.close(),
      }
    : process.send
      ? {
          send: (message) => void (process.connected && process.send!(message)),
          receive: (listener) => process.on('message', listener),
          close: () => process.disconnect(),
        }
      : undefined;
  if (!port) throw new CitiesApiError('parentChannel() is for a worker thread or a child process');
  return Object.assign(new Channel<P['worker'], P['parent']>(port, 'worker', errors), {
    data: workerData as P['data'],
  });
}

function why(crash: Error | undefined, code: number | null, signal: NodeJS.Signals | null): string {
  if ((crash as NodeJS.ErrnoException | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'ran out of memory';
  if (crash) return `failed: ${wordingOf(crash)}`;
  return `stopped (${signal ?? `exit code ${code}`})`;
}
