import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildHere,
  type BuildPlan,
  type BuildResult,
  type SiteBuildOptions as BuildOptions,
} from '../src/app/build.js';
import { buildInThread as inThread, type ThreadHooks } from '../src/app/build-thread.js';
import { errorData, rebuiltError } from '../src/proc/error-data.js';
import { CitiesApiError } from '../src/core/errors.js';
import { LockBusyError, lockSite } from '../src/fs/lock.js';
import { checkSite, siteLeftovers } from './crash-helpers.js';
import { tempDir } from './helpers.js';

// A large build runs in a thread of its own (build-thread.ts): the caller must not be able to
// tell. Callbacks arrive, errors keep their class, message and fields, a signal stops it, and a
// thread that dies is a clear error that leaves the site whole and the next build working.

const ROOT = join(import.meta.dirname, '..');
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('cities-thread-'));
  dir = await realpath(dir);
  await cp(join(ROOT, 'data', 'cities.csv'), join(dir, 'cities.csv'));
  await writeFile(join(dir, 'bad.json'), JSON.stringify([{ id: 1, name_en: 'A' }]));
});
afterAll(() => cleanup());

let sites = 0;
const options = (overrides: Partial<BuildOptions> = {}): BuildOptions => ({
  data: join(dir, 'cities.csv'),
  out: join(dir, `site-${++sites}`),
  orderings: ['default', 'name_en'],
  pageSizes: [20],
  ...overrides,
});
const buildInThread = (o: BuildOptions, hooks?: ThreadHooks) => inThread<BuildPlan, BuildResult>(o, hooks);
const failure = (run: Promise<unknown>) =>
  run.then(
    () => expect.unreachable('the build succeeded'),
    (error: unknown) => error as Error,
  );

describe('buildInThread: the same build as in this thread', () => {
  it('writes the same site and calls onRead, onStart and onProgress (its last step: every page)', async () => {
    const seen: string[] = [];
    const steps: [number, number][] = [];
    const here = await buildHere(options());
    const there = await buildInThread(
      options({
        onRead: () => void seen.push('read'),
        onStart: (plan) => void seen.push(`start ${plan.cities}`),
        onProgress: (done, pages) => void steps.push([done, pages]),
      }),
    );
    expect([there.files, there.written, there.cities, there.pages]).toEqual([
      here.files,
      here.written,
      here.cities,
      here.pages,
    ]);
    expect(seen.slice(-2)).toEqual(['read', 'start 48']);
    expect(steps.at(-1)).toEqual([there.pages, there.pages]);
    expect((await checkSite(there.dir)).problems).toEqual([]);
  });

  it.each<[string, Partial<BuildOptions>]>([
    ['a missing dataset', { data: join('/nonexistent', 'cities.json') }],
    ['an invalid record (its problems listed)', { data: 'bad.json' }],
    ['too many files (exit code 2)', { maxFiles: 10 }],
    ['a site directory that is a file', { out: 'cities.csv' }],
  ])('%s: the same class, message, exit code and problems', async (_, given) => {
    const at = (path: string | undefined) => (path && !path.startsWith('/') ? join(dir, path) : path);
    const o = options({
      ...given,
      ...(given.data !== undefined && { data: at(given.data)! }),
      ...('out' in given && { out: at(given.out)! }),
    } as Partial<BuildOptions>);
    const [here, there] = [await failure(buildHere(o)), await failure(buildInThread(o))];
    expect(there).toBeInstanceOf(CitiesApiError);
    expect(there.message).toBe(here.message);
    expect({ ...there }).toEqual({ ...here });
  });

  it.each([
    ['CitiesApiError', new CitiesApiError('bad', 2, [{ reason: 'why', line: 3 }]), CitiesApiError],
    ['LockBusyError (a builder waits on it)', new LockBusyError('busy', 42, '/x/.site.lock'), LockBusyError],
    ['a built-in error', new TypeError('no'), TypeError],
    ['an errno error', Object.assign(new Error('EACCES: denied'), { code: 'EACCES', path: '/x' }), Error],
  ])('rebuiltError: %s keeps its class, message and fields', (_, error, kind) => {
    const again = rebuiltError(structuredClone(errorData(error)), [LockBusyError]);
    expect(again).toBeInstanceOf(kind);
    expect([again.name, again.message, { ...again }]).toEqual([error.name, error.message, { ...error }]);
  });
});

describe('buildInThread: stopping and failing', () => {
  it.each([
    ['killed', (worker: Worker) => void worker.terminate(), /stopped \(exit code 1\)/],
    ['out of memory', undefined, /ran out of memory/],
  ])(
    'a thread %s mid-build: a CitiesApiError, the site whole, nothing left beside it, the next build works',
    async (_, kill, said) => {
      const o = options();
      const first = await buildHere(o);
      let thread: Worker | undefined;
      const run = buildInThread(
        { ...o, force: true, onProgress: () => thread && kill?.(thread) },
        {
          onThread: (worker) => (thread = worker),
          ...(!kill && { resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 4 } }),
        },
      );
      const error = await failure(run);
      expect(error).toBeInstanceOf(CitiesApiError);
      expect(error.message).toMatch(said);
      expect((await checkSite(first.dir)).problems).toEqual([]);
      expect(await siteLeftovers(first.dir)).toEqual([]);
      const again = await buildInThread({ ...o, force: true });
      expect(again.written).toBe(first.written);
    },
  );

  it('the signal stops it: "interrupted", the site as it was', async () => {
    const o = options();
    await buildHere(o);
    const stop = new AbortController();
    // Every ordering at one city a page: the abort arrives long before the last page.
    const error = await failure(
      buildInThread({
        ...o,
        orderings: undefined,
        pageSizes: [1],
        force: true,
        signal: stop.signal,
        onProgress: () => stop.abort(),
      }),
    );
    expect(error.message).toMatch(/^interrupted: the site .* was left as it was/);
    expect(await siteLeftovers(o.out)).toEqual([]);
    expect((await checkSite(o.out)).problems).toEqual([]);
  });

  it('a callback that throws fails the build with its error, nothing written', async () => {
    const o = options();
    const error = await failure(
      buildInThread({
        ...o,
        onStart: () => {
          throw new RangeError('caller says no');
        },
      }),
    );
    expect([error.constructor, error.message]).toEqual([RangeError, 'caller says no']);
    expect(await siteLeftovers(o.out)).toEqual([]);
  });

  it('a build of the same site in this process, in this thread or another, is refused while it runs (LockBusyError)', async () => {
    const o = options();
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let busy: Error[] = [];
    // Every ordering at one city a page: long enough for the checks below to run while it builds.
    const running = buildInThread({
      ...o,
      orderings: undefined,
      pageSizes: [1],
      onStart: () =>
        void (async () => {
          busy = await Promise.all([failure(buildInThread(o)), failure(lockSite(o.out))]);
          release!();
        })(),
    });
    await held;
    await running;
    expect(busy.map((e) => e instanceof LockBusyError)).toEqual([true, true]);
  });
});

describe('buildInThread in the background (serve rebuilding while it answers)', () => {
  /** The nice values of this process's threads, but this one (Linux: /proc/self/task). */
  const otherThreadsNice = (): number[] =>
    readdirSync('/proc/self/task')
      .filter((task) => task !== String(process.pid))
      .flatMap((task) => {
        let stat: string;
        try {
          stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
        } catch (error) {
          // A thread that ended between the listing and the read (vitest's, a pool's) has no priority left to check.
          if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH')
            return [];
          throw error;
        }
        return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
      });

  it.each([
    ['background: its thread and the writer threads it starts run at nice 19', true, true],
    ['not: they run at the process priority', false, false],
  ])('%s', async (_, background, niced) => {
    if (!existsSync('/proc/self/task')) {
      if (process.env.CI === 'true') throw new Error('/proc/self/task is needed to see threads priorities');
      console.warn('SKIPPED: no /proc/self/task (not Linux): a thread priority cannot be seen here');
      return;
    }
    const seen = new Set<number>();
    const look = () => otherThreadsNice().forEach((nice) => seen.add(nice));
    await buildInThread(options({ background, onStart: look, onProgress: look }));
    expect(seen.has(19)).toBe(niced);
  });
});
