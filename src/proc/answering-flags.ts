/**
 * V8 flags of serve's worker processes (--workers 2 and more): their young-generation collections
 * and their array buffers' sweeps run on the answering thread itself, never as jobs handed to V8's
 * helper threads. Handing a job over signals their shared task queue, and glibc's
 * pthread_cond_signal (2.36 here) can wait there until the helpers woken before have had a CPU:
 * right after a rebuild, with the site-data thread's work queued on them too, the answering thread
 * slept 10-80 ms at a time in that signal (perf, #26).
 *
 * Measured at 140k cities (quiet windows, alternated, one lib; CITIES_API_ANSWERING_FLAGS below):
 * with --workers 2, a static page's p99 right after a rebuild (bench:orderings --quick) was
 * 9.7-16.3 ms with them (median 11.9 of 7) and 9.0-19.0 without (median 14.3 of 7): better, still
 * over the 5 ms goal in all 14 (bench:orderings --sched: the answering threads waited for a CPU over
 * 5 ms 46 times, 58 without, against 12 in the warm window; while they waited over 1 ms the CPUs ran
 * the other worker 28-34 %, serve's nice-19 threads reading the reloaded site 23-26 %, V8's helpers
 * 8-9 %, the kernel 3-9 %: 1 GB of the build not yet on disk). With one worker they helped in no
 * run: 13.6 ms with them, 4.0 without (one each; 1.45, 1.67 in an earlier session). What they
 * cost was not measurable: main-thread instructions per request (valgrind, 2 runs each) A 85.4k
 * either way, BD 100.4k and 100.3k; req/s without them / with (bench:server --compare-env, 2 runs)
 * A 1.08, 1.02, B 1.02, 1.16, BD 1.13, 0.84 (noise); serve --data's first build at 20k cities
 * 1.38 s and 1.40 s. So the worker processes get them, and the CLI's own process (one worker: it
 * answers and builds) keeps V8's defaults.
 *
 * CITIES_API_ANSWERING_FLAGS=none leaves them out (read here only, for benches that compare the
 * two: CONTRIBUTING); it is no user option.
 */
export const ANSWERING_FLAGS: readonly string[] =
  process.env.CITIES_API_ANSWERING_FLAGS === 'none'
    ? []
    : ['--no-parallel-scavenge', '--no-concurrent-array-buffer-sweeping'];
