import { getSystemErrorMap } from 'node:util';
import { errnoAdvice } from '../fs/errno-words.js';
import type { Output } from './command.js';

// The CLI's stdout and stderr, watched. A real one (a file, a pipe) tells of a write that failed
// not to its caller but with an 'error' event, a tick later: unheard, that event ended the process
// with Node's "Unhandled 'error' event" and a stack trace (`cities-api --version > /dev/full`,
// `cities-api config nginx | head -c 10`). A stream that failed takes nothing more (Node drops what
// is written to it) and the command runs to its end:
// - its reader gone (EPIPE: `| head`, `| grep -q`): nothing said, the exit status the command's own.
//   Node's console ignores EPIPE so, and CLIs using epipebomb or exit-on-epipe exit 0 on it; a C
//   tool dies of SIGPIPE at its next write (status 141), which would leave a `build | head -1` half
//   done, and fail a pipeline under `set -o pipefail`, for a reader that had what it wanted.
// - any other error (ENOSPC, a full disk): one line on stderr once the command is done, naming the
//   stream and what to do, and a non-zero exit status: what the command printed is lost.
// A command that runs until stopped (serve) says at once what it goes on without, whatever the error.

type Name = 'stdout' | 'stderr';

export interface OutputWatch {
  /** A command that runs until stopped: a failure of stdout is said at once (a closed pipe too), with what it goes on without. */
  runsOn(without: string): void;
  /** The exit status of a command done with `code`, once a failure not said yet is said. */
  settle(code: number): Promise<number>;
}

export function watchOutputs(stdout: Output, stderr: Output): OutputWatch {
  const failed = new Map<Name, NodeJS.ErrnoException>();
  let without: string | undefined;
  let told = false;
  const tell = (error: NodeJS.ErrnoException) => {
    told = true;
    stderr.write(`cities-api: ${outputError(error, without)}\n`);
  };
  const streams = [
    ['stdout', stdout],
    ['stderr', stderr],
  ] as const;
  const listeners = streams.map(([name, stream]) => {
    const listener = (error: NodeJS.ErrnoException) => {
      if (failed.has(name)) return;
      failed.set(name, error);
      if (name === 'stdout' && without !== undefined) tell(error);
    };
    stream.on('error', listener);
    return () => {
      // Still writing (a pipe read slowly): an error may come after the exit status is decided, heard and dropped.
      if (!stream.writableLength) stream.off('error', listener);
    };
  });
  return {
    runsOn: (what) => void (without = what),
    settle: async (code) => {
      // A write's failure is told a tick after the write.
      await new Promise((done) => setImmediate(done));
      for (const stop of listeners) stop();
      const error = failed.get('stdout');
      if (error && error.code !== 'EPIPE' && !told) tell(error);
      const lost = [...failed.values()].some((e) => e.code !== 'EPIPE');
      return lost && code === 0 ? 1 : code;
    },
  };
}

/** `cannot write the output to stdout: no space left on device; free some space and try again (ENOSPC)`. */
function outputError(error: NodeJS.ErrnoException, without: string | undefined): string {
  const said = getSystemErrorMap().get(error.errno ?? 0)?.[1] ?? error.message;
  const advice =
    error.code === 'EPIPE'
      ? undefined
      : (errnoAdvice(error.code) ?? 'check where it goes (a file, a pipe, a terminal), then try again');
  const what = without === undefined ? 'cannot write the output to stdout' : 'cannot write to stdout';
  return `${what}: ${said}; ${[without, advice].filter(Boolean).join('; ')} (${error.code})`;
}
