import type { ChildProcess } from 'node:child_process';
import { copyFile, lstat, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type BuildResult } from '../src/app/build.js';
import { NAME_FIELDS, type City } from '../src/core/fields.js';
import { CityLog } from '../src/dataset/city-log.js';
import { readManifest } from '../src/store/manifest-file.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import {
  appears,
  caughtUp,
  checkSite,
  killStragglers,
  manyCities,
  seededRandom,
  shuffled,
  siteLeftovers,
  sleep,
  spawnCli,
  spawnNode,
  spreadDelays,
  treeDifferences,
  writeDataset,
} from './crash-helpers.js';
import { cli } from './cli-helpers.js';
import { KIT, readTree, tempDir, entriesOf } from './helpers.js';
import { rawRequest, ROOT, writableCli } from './serve-helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-crash-')));
afterAll(async () => {
  await killStragglers();
  await cleanup();
});

// Two versions of a site built into the same directory. B renames a fifth of A's cities and
// precomputes another page size, so a build from one to the other hard-links unchanged pages,
// writes new ones and removes stale ones: every path of the incremental writer is exercised.
// 1000 cities take every path 3000 did, for about a third less CPU per build (a clean build of A 1.4 CPU-s, 2.3 at
// 3000 cities, measured at load 15).
const CITIES = 1000;
/**
 * Kills of a build, at seeded moments: every run the same schedule, however fast the machine. Two thirds anywhere,
 * one third after the swap: each phase is hit (the tally below checks it). At 6 kills the swap was hit once (load 47)
 * and not at all (load 12: three builds had finished first): 9 keeps room.
 */
const KILLS = 9;
/**
 * Kills of a writable server, per dataset format (one before any POST commits, the others spread), and its dataset's
 * size. At 4 kills the log was seen not folded yet once (.csv, load 12; the tally needs one): 6 keeps room.
 */
const WRITE_KILLS = 6;
const WRITE_CITIES = 300;
const BUILDING = /cities valid; building \d+ pages/;
const SITE_FLAGS = ['--collation', 'codepoint', '--base-url', 'http://x', '--orderings', 'default,name_en'];
type Version = 'A' | 'B';
const versions: Record<Version, { data: string; pageSizes: string; tree: Map<string, Buffer>; dataset: string }> = {
  A: { data: '', pageSizes: '50', tree: new Map(), dataset: '' },
  B: { data: '', pageSizes: '20', tree: new Map(), dataset: '' },
};
const buildArgs = (version: Version, out: string) => [
  'build',
  '--data',
  versions[version].data,
  '--out',
  out,
  '--page-sizes',
  versions[version].pageSizes,
  ...SITE_FLAGS,
];
const other = (version: Version): Version => (version === 'A' ? 'B' : 'A');

/**
 * Builds `version` into `out` to completion, in this process (the CLI's own runMain: no process to start, its code
 * already compiled: about a third of a build process's CPU); returns the "N written, N unchanged, N removed" counts.
 * Only the builds killed or stopped are processes of their own.
 */
async function buildFully(
  version: Version,
  out: string,
): Promise<{ written: number; unchanged: number; removed: number }> {
  const exit = await cli(root, ...buildArgs(version, out));
  expect(exit, exit.stderr).toMatchObject({ code: 0 });
  const [, written, unchanged, removed] = /: (\d+) written, (\d+) unchanged, (\d+) removed/
    .exec(exit.stdout)!
    .map(Number);
  return { written: written!, unchanged: unchanged!, removed: removed! };
}

/**
 * Which version a site directory holds, after checking it is byte for byte that version's clean
 * build (whose files were checked against its manifest: sha256, no extra file, .gz/.br decompress
 * to their page). Undefined when the directory holds no site.
 */
async function wholeVersion(out: string): Promise<Version | undefined> {
  const manifest = await readManifest(out);
  if (!manifest) return undefined;
  const version = (Object.keys(versions) as Version[]).find((v) => versions[v].dataset === manifest.dataset.sha256);
  expect(version, `dataset ${manifest.dataset.sha256} is neither A nor B`).toBeDefined();
  expect(treeDifferences(await readTree(out), versions[version!].tree)).toEqual([]);
  return version;
}

beforeAll(async () => {
  const a = manyCities(CITIES, 'A');
  const b = a.map((city, i) =>
    i % 5 ? city : { ...city, name_en: `${city.name_en} renamed`, name_fr: `B ${city.name_fr}` },
  );
  versions.A.data = join(root, 'a.csv');
  versions.B.data = join(root, 'b.csv');
  await Promise.all([writeDataset(versions.A.data, a), writeDataset(versions.B.data, b)]);
  // A's reference is built where the kill run starts from (its tree is held here): one build of A fewer.
  for (const version of ['A', 'B'] as const) {
    const reference = join(root, version === 'A' ? 'site' : `reference-${version}`);
    await buildFully(version, reference);
    const { dataset, problems, tree } = await checkSite(reference);
    expect(problems).toEqual([]);
    Object.assign(versions[version], { dataset, tree });
  }
  expect(versions.A.dataset).not.toBe(versions.B.dataset);
});

describe('a build killed at any moment leaves a whole site, and the next build recovers', () => {
  // --durable: the killed builds sync what they write (fds open in their writer threads, the tree's directories).
  it.each<[string, string[]]>([
    ['without --durable', []],
    ['with --durable', ['--durable']],
  ])(
    `SIGKILL at ${KILLS} seeded moments of a build %s: the site is always all A or all B; the next build cleans up and finds it intact`,
    async (_, flags) => {
      const killed = (version: Version, out: string) => [...buildArgs(version, out), ...flags];
      // Holds A, as its reference build left it (or built again after the first row).
      const out = join(root, 'site');
      expect(await cli(root, ...buildArgs('A', out))).toMatchObject({ code: 0 });
      // Phases of a build from A to B: from the "building N pages" line (the dataset is read) to
      // the swap (the old site renamed aside), then to the exit (the old site deleted).
      const calibration = spawnCli(killed('B', out));
      await calibration.printed(BUILDING);
      const building = performance.now();
      await appears(root, `.site.previous-${calibration.child.pid}`, calibration.exited);
      const swapped = performance.now();
      expect(await calibration.exited).toMatchObject({ code: 0 });
      const phases = { assembling: swapped - building, cleanup: performance.now() - swapped };

      // Two thirds of the kills are spread over the whole build, one third over the first third of
      // the moments after the swap (a short window: on a loaded machine, kills spread over all of it
      // landed after the exit, 2 runs in 4 with none after the swap).
      const random = seededRandom(6);
      const anywhere = spreadDelays((KILLS * 2) / 3, 0, phases.assembling + phases.cleanup, random).map((delay) => ({
        after: 'building' as const,
        delay,
      }));
      const afterSwap = spreadDelays(KILLS / 3, 0, phases.cleanup / 3, random).map((delay) => ({
        after: 'swap' as const,
        delay,
      }));
      const schedule = shuffled([...anywhere, ...afterSwap], random);

      let present: Version = 'B';
      const tally = {
        'before the swap': 0,
        'between the two renames': 0,
        'after the swap, before cleanup': 0,
        'after the swap': 0,
        'build finished first': 0,
      };
      for (const { after, delay } of schedule) {
        const target = other(present);
        const { child, exited, printed } = spawnCli(killed(target, out));
        const swap = appears(root, `.site.previous-${child.pid}`, exited);
        await (after === 'swap' ? swap : printed(BUILDING));
        await sleep(delay);
        child.kill('SIGKILL');
        const exit = await exited;
        const leftovers = await siteLeftovers(out);
        expect(
          // The killed build's own: its staging tree or old site (`-PID`), a draft (`-PID.TOKEN`: dead-drafts.ts).
          leftovers.every(
            (name) => name === '.site.lock' || new RegExp(`-${child.pid}(\\.[0-9a-z]+\\.\\d+)?$`).test(name),
          ),
          leftovers.join(),
        ).toBe(true);
        const found = await wholeVersion(out);
        let expected: Version;
        if (exit.signal !== 'SIGKILL') {
          expect(exit, exit.stderr).toMatchObject({ code: 0 });
          tally['build finished first']++;
          expected = target;
        } else if (!found) {
          // Killed between rename(out, previous) and rename(staging, out): the next build moves the previous site back.
          expect(leftovers).toContain(`.site.previous-${child.pid}`);
          tally['between the two renames']++;
          expected = present;
        } else if (found === present) {
          tally['before the swap']++;
          expected = present;
        } else {
          tally[
            leftovers.includes(`.site.previous-${child.pid}`) ? 'after the swap, before cleanup' : 'after the swap'
          ]++;
          expected = target;
        }
        expect(found ?? present).toBe(expected);
        // The next, normal build of what should be there finds every file intact (nothing to
        // write or remove: all hard-linked; read first when the kill left no stat cache that
        // matches) and leaves nothing beside the site but its stat cache.
        expect(await buildFully(expected, out)).toMatchObject({ written: 0, removed: 0 });
        expect(await siteLeftovers(out)).toEqual([]);
        // ...and leaves a stat cache that matches the site: the build after it checks every file by lstat and writes nothing.
        expect((await cli(root, ...buildArgs(expected, out))).stdout).toMatch(
          /its files are as built: nothing to write/,
        );
        if (!found) expect(await wholeVersion(out)).toBe(expected);
        present = expected;
      }
      console.log(
        `build killed ${KILLS} times (assembling ~${Math.round(phases.assembling)} ms, cleanup ~${Math.round(phases.cleanup)} ms):`,
        tally,
      );
      expect(tally['before the swap']).toBeGreaterThan(0);
      expect(tally['after the swap'] + tally['after the swap, before cleanup']).toBeGreaterThan(0);
      // About 30 builds.
    },
    600_000,
  );
});

describe('two builds of one site at once never interleave', () => {
  // The first build is stopped (SIGSTOP) as soon as it holds the site's lock, the second started then and the
  // first resumed once the second has exited: whatever the machine's speed, the second reaches the lock while
  // the first holds it (both have every page to write: a new directory, or a site whose links point elsewhere).
  it.each([
    ['into a new directory', 'A', []],
    ['over a site built for another base URL', 'B', ['--base-url', 'http://elsewhere']],
  ] as const)('%s: one builds, the other stops at once with a clear message', async (_, first, before) => {
    const name = `race-${before.length ? 'over' : 'new'}`;
    const out = join(root, name);
    const lock = join(root, `.${name}.lock`);
    if (before.length) expect(await cli(root, ...buildArgs('A', out), ...before)).toMatchObject({ code: 0 });
    const holder = spawnCli(buildArgs(first, out));
    await appears(root, `.${name}.lock`, holder.exited);
    holder.child.kill('SIGSTOP');
    // Its pid alone, as every version of cities-api reads a lock (lock-holder.ts).
    expect(await readFile(lock, 'utf8').catch(() => 'no lock'), 'the first build holds the lock, stopped').toBe(
      `${holder.child.pid}\n`,
    );
    // In this process: it refuses as a process would (the lock names a live process that is not this one);
    // --lock-wait 0: at once, not after waiting for the stopped build.
    const refused = await cli(root, ...buildArgs(other(first), out), '--lock-wait', '0');
    holder.child.kill('SIGCONT');
    expect(await holder.exited).toMatchObject({ code: 0 });
    // Its last line (a slow read of the dataset prints its progress first).
    expect({ code: refused.code, said: refused.stderr.trimEnd().split('\n').at(-1) }).toEqual({
      code: 1,
      said:
        `cities-api: another build of ${out} is running (pid ${holder.child.pid}, lock ${lock}); try again once it is done, ` +
        `or wait longer (--lock-wait); if pid ${holder.child.pid} is no cities-api process (the lock outlived its own), delete ${lock}`,
    });
    expect(await wholeVersion(out)).toBe(first);
    expect(await siteLeftovers(out)).toEqual([]);
  });

  it.each<[string, number | undefined]>([
    ['lockWait 0: the second stops at once with the same message', 0],
    ['by default (10 s): the second waits for the first, then builds', undefined],
  ])('two builds in one process (they would share one staging tree), %s', async (_, lockWait) => {
    const out = join(root, `race-in-process-${lockWait ?? 'default'}`);
    const options = (data: string) => ({
      data,
      out,
      baseUrl: 'http://x',
      collation: 'codepoint' as const,
      pageSizes: [20],
      lockWait,
    });
    const ended: BuildResult[] = [];
    const results = await Promise.allSettled(
      [join(KIT, 'cities48.csv'), join(KIT, 'cities11.csv')].map((data) =>
        build(options(data)).then((result) => (ended.push(result), result)),
      ),
    );
    if (lockWait === 0) {
      expect(results.map(({ status }) => status).sort()).toEqual(['fulfilled', 'rejected']);
      const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!.reason as Error;
      const lock = join(root, `.race-in-process-${lockWait}.lock`);
      expect(refused.message).toBe(
        `another build of ${out} is running (pid ${process.pid}, lock ${lock}); try again once it is done, ` +
          `or wait longer (\`lockWait\`); pid ${process.pid} is this process: if none of its threads holds it ` +
          `(one ended holding it, or the lock is older than this process), delete ${lock}`,
      );
    } else expect(results.map(({ status }) => status)).toEqual(['fulfilled', 'fulfilled']);
    // The site is the last build's, whole.
    expect((await checkSite(out)).problems).toEqual([]);
    expect((await readManifest(out))!.dataset.count).toBe(ended.at(-1)!.cities);
    expect(await siteLeftovers(out)).toEqual([]);
  });
});

describe('the build lock holds under contention', () => {
  // A contender takes the lock (lib/fs/lock.js) as fast as it can; while holding it, it
  // creates a marker file exclusively, so a second holder at the same time is seen (EEXIST).
  // After some holds it dies holding the lock, which the others must take over.
  const CONTENDER = `
    import { open, rm } from 'node:fs/promises';
    const [lockModule, out, marker, holds] = process.argv.slice(1);
    const { lockSite } = await import(lockModule);
    const tally = { held: 0, refused: 0, overlaps: 0 };
    for (;;) {
      let release;
      try { release = await lockSite(out); } catch { tally.refused++; continue; }
      tally.held++;
      try {
        await (await open(marker, 'wx')).close();
        await new Promise((resolve) => setImmediate(resolve));
        await rm(marker);
      } catch (error) {
        if (error.code !== 'EEXIST') throw error;
        tally.overlaps++;
      }
      if (tally.held === Number(holds)) break;
      await release();
    }
    console.log(JSON.stringify(tally));`;

  it('four processes at a time, each dying with the lock after 25 holds: never two holders at once', async () => {
    const out = join(root, 'contended');
    const lockModule = pathToFileURL(join(ROOT, 'lib/fs/lock.js')).href;
    // A number of contenders, not a time window: under load, starting them could take all of a window's time.
    const CONTENDERS = 12;
    let started = 0;
    const total = { held: 0, refused: 0, overlaps: 0, contenders: 0 };
    await Promise.all(
      [1, 2, 3, 4].map(async () => {
        while (started < CONTENDERS) {
          started++;
          const exit = await spawnNode([
            '--input-type=module',
            '-e',
            CONTENDER,
            lockModule,
            out,
            join(root, 'contended-holder'),
            '25',
          ]).exited;
          expect(exit, exit.stderr).toMatchObject({ code: 0 });
          const tally = JSON.parse(exit.stdout) as Omit<typeof total, 'contenders'>;
          total.held += tally.held;
          total.refused += tally.refused;
          total.overlaps += tally.overlaps;
          total.contenders++;
        }
      }),
    );
    expect(total).toMatchObject({ contenders: CONTENDERS, held: CONTENDERS * 25 });
    expect(total.refused).toBeGreaterThan(0);
    expect(total.overlaps).toBe(0);
  });
});

/** What a writable server killed now has made durable: the dataset file, then the logged cities it lacks (what a restart folds in). */
async function persisted(file: string): Promise<City[]> {
  const cities = (await readDataset(file)).toCities();
  const ids = new Set(cities.map((city) => city.id));
  const logged = (await CityLog.of(file).read()).cities;
  return [...cities, ...logged.filter((city) => !ids.has(city.id))];
}

describe('a writable server killed at any moment keeps its dataset whole', () => {
  const TOKEN = 'crash-token-0123456789';
  const names = (name: string) => Object.fromEntries(NAME_FIELDS.map((field) => [field, name]));
  const post = (url: string, name: string) =>
    rawRequest(`${url}/cities/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}` },
      body: JSON.stringify(names(name)),
    });
  const count = async (url: string) =>
    (JSON.parse((await rawRequest(`${url}/cities/`)).body.toString()) as { count: number }).count;
  const killed = async (child: ChildProcess) => {
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  };

  it.each(['csv', 'json'] as const)(
    `.%s: SIGKILL at ${WRITE_KILLS} seeded moments of 3 parallel POSTs and their background fold: the file is always a whole dataset, and with its log holds every acknowledged city once; the restarted server answers each`,
    async (format) => {
      const dir = join(root, `writable-${format}`);
      await mkdir(dir);
      const file = join(dir, `cities.${format}`);
      await writeDataset(file, manyCities(WRITE_CITIES, 'W'));
      const start = () => writableCli(join(dir, 'site'), file, TOKEN);

      // How long three parallel creations take to be answered (logged) and then folded into the file in the
      // background (the new dataset staged, the site built from it, then it is renamed in, the log dropped).
      const first = await start();
      const started = performance.now();
      expect(
        (await Promise.all([0, 1, 2].map((j) => post(first.url, `Calibration ${j}`)))).map(({ status }) => status),
      ).toEqual([201, 201, 201]);
      await caughtUp(file);
      const duration = performance.now() - started;
      await killed(first.child);

      const random = seededRandom(format === 'csv' ? 11 : 12);
      // Squared, so a third of the kills fall in the first ninth of the span, where the file is written;
      // and one at once, before any POST can commit (however fast POSTs have become).
      const delays = shuffled(
        [0, ...spreadDelays(WRITE_KILLS - 1, 0, 1, random).map((u) => duration * 1.2 * u * u)],
        random,
      );
      const tally = {
        'none committed': 0,
        'some committed': 0,
        'all committed': 0,
        acknowledged: 0,
        'killed while the log was not folded yet': 0,
      };
      for (const [run, delay] of delays.entries()) {
        const before = await persisted(file);
        const server = await start();
        // Restarted after a kill, the server folds its log into the file and rebuilds its site from it: every committed city is answered.
        expect(await count(server.url)).toBe(before.length);
        expect((await readDataset(file)).toCities()).toEqual(before);
        const posted = [0, 1, 2].map((j) => `Run ${run} city ${j}`);
        // The kill at once is one before any POST can commit: the server stopped (SIGSTOP) before they are sent, not
        // a race between this process's timer and the server's fsync (a loaded machine let the server commit first).
        if (delay === 0) server.child.kill('SIGSTOP');
        const answers = Promise.allSettled(posted.map((name) => post(server.url, name)));
        await sleep(delay);
        await killed(server.child);
        const acknowledged = (await answers).flatMap((answer, j) =>
          answer.status === 'fulfilled' && answer.value.status === 201 ? [posted[j]!] : [],
        );

        const after = await persisted(file);
        expect(after.slice(0, before.length)).toEqual(before);
        const added = after.slice(before.length);
        const firstId = Math.max(...before.map(({ id }) => id)) + 1;
        expect(added.map(({ id }) => id)).toEqual(added.map((_, i) => firstId + i));
        expect(new Set(added.map(({ name_en }) => name_en)).size).toBe(added.length);
        expect(posted).toEqual(expect.arrayContaining(added.map(({ name_en }) => name_en)));
        expect(added.map(({ name_en }) => name_en)).toEqual(expect.arrayContaining(acknowledged));
        // The backup is a whole dataset too, never ahead of the file: as it was before its last change
        // (or the same, if killed between making the backup and the rename).
        await copyFile(`${file}.bak`, join(dir, `backup.${format}`));
        const backup = (await readDataset(join(dir, `backup.${format}`))).toCities();
        expect(after.slice(0, backup.length)).toEqual(backup);
        tally['killed while the log was not folded yet'] += (await lstat(CityLog.of(file).path).catch(() => null))
          ? 1
          : 0;
        expect(backup.length).toBeLessThanOrEqual(after.length);
        tally[
          added.length === 0 ? 'none committed' : added.length < posted.length ? 'some committed' : 'all committed'
        ]++;
        tally.acknowledged += acknowledged.length;
      }
      const last = await start();
      expect(await count(last.url)).toBe((await readDataset(file)).count);
      // The killed servers' dataset lock and staged files are taken over and removed by the next POST.
      expect((await post(last.url, 'After the kills')).status).toBe(201);
      await caughtUp(file);
      expect(await entriesOf(dir)).toEqual([`backup.${format}`, `cities.${format}`, `cities.${format}.bak`, 'site']);
      // The killed servers' records as the site's writer were removed by the next one's first build: the running one's is left.
      expect((await readdir(dir)).filter((name) => name.startsWith('.site.writer-'))).toHaveLength(1);
      await last.stop();
      console.log(
        `.${format} server killed ${WRITE_KILLS} times during 3 POSTs (answered in ~${Math.round(duration)} ms):`,
        tally,
      );
      expect(tally['none committed']).toBeGreaterThan(0);
      expect(tally['some committed'] + tally['all committed']).toBeGreaterThan(0);
      expect(tally['killed while the log was not folded yet']).toBeGreaterThan(0);
    },
    300_000,
  );
});
