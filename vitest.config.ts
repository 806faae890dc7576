import { accessSync, constants, statfsSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { defineConfig } from 'vitest/config';

// The tests' temporary directories (os.tmpdir(): sites, clones, projects, copies; vitest's workers
// and the processes they start inherit TMPDIR) on tmpfs when it has room. A run writes and deletes
// hundreds of thousands of files; on a disk's file system (this machine's ext4, mounted with
// discard) that was a fifth of the run's CPU time, spent in the kernel: a kit site's build
// 1.9 + 3.7 CPU-s (user + sys) on ext4, 1.7 + 0.5 on tmpfs. The largest site a run holds at once is
// edge-20k's, 2.8 GB. A TMPDIR already set wins. Deno reads nothing under /dev without --allow-all,
// so the files Deno reads stay on the disk's temporary directory (helpers.ts DISK_TMPDIR).
const TMPFS = '/dev/shm';
const TMPFS_ROOM = 8e9;
function tmpfsHasRoom(): boolean {
  try {
    accessSync(TMPFS, constants.W_OK);
    const { bavail, bsize } = statfsSync(TMPFS);
    return bavail * bsize >= TMPFS_ROOM;
  } catch {
    return false;
  }
}
if (!process.env.TMPDIR && tmpfsHasRoom()) {
  process.env.CITIES_API_TEST_DISK_TMPDIR = tmpdir();
  process.env.TMPDIR = TMPFS;
}

// The tests in three tiers, each file in one (npm run test:unit, test:integration, test:engines;
// npm test runs all three). A new file is integration unless it is listed below.

/** In-process only: no child process, thread, socket or compiled code (nothing in lib/). Seconds. */
const UNIT = [
  'all-page-reader',
  'architecture',
  'body-sink',
  'handed-parts',
  'browsable',
  'byte-pool',
  'bytes',
  'catch-up',
  'city-table',
  'coalesced',
  'compact-cities',
  'cloudfront-stack',
  'create-city',
  'dataset-file',
  'dead-drafts',
  'default-order',
  'doorkeeper',
  'edge-bench-kinds',
  'edge-cuts',
  'edge-page',
  'edge-ranges',
  'edge-timeouts',
  'errno-words',
  'durable-marks',
  'page-reads',
  'fetch-handler',
  'file-ids',
  'file-syncs',
  'fold-journal',
  'full-disk',
  'json-text',
  'lock-holder',
  'layout-doc',
  'library-entries',
  'negotiate',
  'openapi',
  'ordering',
  'page',
  'page-assembly',
  'page-file',
  'page-memory',
  'preview-marker',
  'paginate',
  'pretty-json',
  'properties',
  'python-text',
  'query-string',
  'raw-headers',
  'read-dataset',
  'remove-tree',
  'request-body',
  'route',
  'route-memo',
  'route-table',
  'run-bounded',
  'send-gate',
  'settings-warnings',
  'site-entries',
  'site-layout',
  'site-path',
  'site-writers',
  'site-size',
  'token-auth',
  'validate-record',
  'written-user-text',
];

/** Against a real engine or tool other than Node: nginx, Chromium, workerd, Deno, Netlify's, CPython and DRF, npm pack. */
const ENGINES = [
  'browser',
  'edge-20k',
  'edge-cloudflare',
  'edge-cloudflare-budget',
  'edge-deno',
  'edge-lambda',
  'edge-large',
  'edge-netlify',
  'netlify',
  'nginx',
  'oracle',
  'package',
  'post-parity',
  'python-json',
  'url-path',
];

const files = (names: string[]) => names.map((name) => `test/${name}.test.ts`);
const CORES = availableParallelism();
/** Unit files keep every core busy; the others mostly wait on processes, servers and timers: one file more. */
const unitRun = { sequence: { groupOrder: 0 }, maxWorkers: CORES, isolate: false };
// Files share the cores, so a build or an engine's start can take several times its time alone.
const processRun = { sequence: { groupOrder: 1 }, maxWorkers: CORES + 1, testTimeout: 180_000 };

const HOOK_TIMEOUT = 120_000;

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: HOOK_TIMEOUT,
    // What test/started-process.ts bounds a start with in a hook (inside, a hook's timeout is not readable).
    provide: { hookTimeout: HOOK_TIMEOUT },
    setupFiles: ['test/buffer-equality.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: files(UNIT), ...unitRun } },
      {
        // The compiled CLI, workers and threads, servers on loopback, the file system's failures.
        extends: true,
        test: {
          name: 'integration',
          include: ['test/*.test.ts'],
          exclude: files([...UNIT, ...ENGINES]),
          globalSetup: ['test/build-on-demand.ts', 'test/kit-sites.ts'],
          ...processRun,
        },
      },
      {
        extends: true,
        test: {
          name: 'engines',
          include: files(ENGINES),
          globalSetup: ['test/build-on-demand.ts', 'test/kit-sites.ts'],
          ...processRun,
        },
      },
    ],
  },
});
