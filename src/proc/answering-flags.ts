import { setFlagsFromString } from 'node:v8';

/**
 * V8 flags of a process whose main thread answers requests (serve's worker processes, and the
 * CLI's own when it answers alone): its young-generation collections and its array buffers' sweeps
 * run on that thread itself, never as jobs handed to V8's helper threads. Handing a job over
 * signals their shared task queue, and glibc's pthread_cond_signal (2.36 here) can wait there until
 * the helpers woken before have had a CPU: right after a rebuild, with the site-data thread's work
 * queued on them too, the answering thread slept 10-80 ms at a time in that signal (perf, #26).
 * The collections they make serial are of the young generation: a few ms of garbage. At 140k
 * cities with --workers 2 (bench:orderings --quick, quiet windows), a static page's p99 right after
 * a rebuild: 2.5-5.0 ms in 7 runs, against 3.3-6.2 ms in 10 without (4 of them over 5 ms).
 *
 * CITIES_API_ANSWERING_FLAGS=none leaves them out (read here only, for benches that compare the
 * two: CONTRIBUTING); it is no user option.
 */
export const ANSWERING_FLAGS: readonly string[] =
  process.env.CITIES_API_ANSWERING_FLAGS === 'none'
    ? []
    : ['--no-parallel-scavenge', '--no-concurrent-array-buffer-sweeping'];

/**
 * ANSWERING_FLAGS set in this running process (V8 reads them at each collection): for the CLI's
 * own process, started before it knew it would answer. A library caller's process keeps its flags.
 */
export function answerOnOwnThread(): void {
  for (const flag of ANSWERING_FLAGS) setFlagsFromString(flag);
}
