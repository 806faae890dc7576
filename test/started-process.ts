import type { ChildProcess } from 'node:child_process';
import { inject, TestRunner } from 'vitest';

// Waiting for a process the tests start (a server, a dev runtime) to be ready: on the process
// itself, never on a fixed timer. Under a load of 20-30 a start took over the 60 s a timer allowed;
// a slow machine must make a test slower, not red. A process that exits before it is ready fails
// at once, with its output. The one bound is the running test's own timeout (what is left of it), so
// that the process is stopped and its output reported just before vitest would fail the test anyway.

declare module 'vitest' {
  export interface ProvidedContext {
    /** vitest.config.ts's hookTimeout: a hook's own timeout is not readable from inside it. */
    hookTimeout: number;
  }
}

/** Kept back from the test's timeout: time to stop the process and report its output first. */
const MARGIN_MS = 5000;

/**
 * How long a start (or any wait of a helper on a process) may still take: what is left of the
 * running test's timeout, less the margin; in a hook (no current test), the configured hook timeout
 * (a hook given a longer timeout of its own is bounded by this all the same).
 */
export function testTimeLeft(): number {
  const test = TestRunner.getCurrentTest();
  const left = test ? test.timeout - (Date.now() - (test.result?.startTime ?? Date.now())) : inject('hookTimeout');
  return Math.max(left - MARGIN_MS, left / 2);
}

/** A process being started: its output so far (stdout and stderr, as they came) and how to stop it. */
export interface Starting {
  child: ChildProcess;
  /** Says what it is in errors: `serve`, `deno serve`, a command line. */
  name: string;
  output: () => string;
  stop: () => Promise<unknown>;
}

/** Follows a child started with stdout and stderr piped: its output, and a stop (SIGTERM, resolved at its exit). */
export function following(child: ChildProcess, name: string): Starting & { stop: () => Promise<void> } {
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const terminate = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { child, name, output: () => output, stop: terminate };
}

/**
 * Resolves with `ready()`'s first truthy answer, asked at each output and every `pollMs` (0: at
 * output only). Rejects at once when the process exits first, after testTimeLeft() (stopping it);
 * both errors hold its output.
 */
export function whenReady<T>(
  { child, name, output, stop }: Starting,
  ready: () => T | undefined | Promise<T | undefined>,
  pollMs = 0,
): Promise<T> {
  const bound = testTimeLeft();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let dead = false;
    let asking = false;
    const settle = (error: Error | undefined, value?: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      child.stdout?.off('data', ask);
      child.stderr?.off('data', ask);
      child.off('exit', exited);
      if (error) reject(error);
      else resolve(value!);
    };
    // One question at a time: a slow answer is waited for, not asked again over it.
    const ask = () => {
      if (dead || asking) return;
      asking = true;
      void Promise.resolve()
        .then(ready)
        .then(
          (value) => value !== undefined && value !== false && settle(undefined, value),
          (error: Error) => settle(error),
        )
        .finally(() => (asking = false));
    };
    // Its last output can come just after its exit: read for a moment more before saying it.
    const exited = (code: number | null, signal: NodeJS.Signals | null) => {
      dead = true;
      setTimeout(() => settle(new Error(`${name} exited (${signal ?? code}) before it was ready:\n${output()}`)), 100);
    };
    const timer = setTimeout(() => {
      // Stopped before the error is told: a test that fails here leaves no process behind.
      dead = true;
      child.off('exit', exited);
      const said = `${name} was not ready within ${Math.round(bound / 1000)} s (the test's timeout):`;
      void stop().finally(() => settle(new Error(`${said}\n${output()}`)));
    }, bound);
    const poll = pollMs > 0 ? setInterval(ask, pollMs) : undefined;
    if (child.exitCode !== null || child.signalCode !== null) return exited(child.exitCode, child.signalCode);
    child.once('exit', exited);
    child.stdout?.on('data', ask);
    child.stderr?.on('data', ask);
    ask();
  });
}

/** whenReady on a line of output: the first group of `pattern` once the output matches. */
export function printed(starting: Starting, pattern: RegExp): Promise<string> {
  return whenReady(starting, () => pattern.exec(starting.output())?.[1]);
}
