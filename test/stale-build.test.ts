import { appendFileSync, lstatSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, runBuild } from '../src/app/build.js';
import type { SwapCheck, SwapOutcome } from '../src/app/build-options.js';
import { siteSignature } from '../src/app/behind-site.js';
import { SiteBuilder } from '../src/app/site-builder.js';
import { recordWriter } from '../src/app/site-writers.js';
import { openWritable } from '../src/app/writable.js';
import { CityLog } from '../src/dataset/city-log.js';
import { readFileOnly } from '../src/dataset/as-read.js';
import { DatasetMoved } from '../src/dataset/log-fold.js';
import type { LoggedCityWriter } from '../src/dataset/logged-writer.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import type { NewCity } from '../src/post/create-city.js';
import { LockBusyError, lockDataset, type Release } from '../src/fs/lock.js';
import { BEHIND_PATH } from '../src/site/behind.js';
import { MANIFEST_PATH } from '../src/site/manifest.js';
import { caughtUp, type Exit, manyCities, sleep, spawnCli, spawnNode, writeDataset } from './crash-helpers.js';
import { KIT, makeCity, tempDir } from './helpers.js';
import { createAt, SMALL_SITE, startCli } from './serve-helpers.js';

// Two builders on one site: a build that read the dataset before another process changed it (a
// writable server folding or logging the cities it acknowledged) must not swap its older files in
// unmarked. Whatever finishes last, the site's files hold every city of the dataset (its file plus
// its log), or the site is marked behind (BEHIND_PATH): nginx then asks the live server.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-stale-build-')));
afterAll(() => cleanup());

const SETTINGS = { collation: 'codepoint', orderings: ['default'], pageSizes: [10] } as const;

/** A row of the file again with another id (a city folded in by another process). */
const addRow = (data: string, id: number) =>
  appendFileSync(data, `${readFileSync(data, 'utf8').split('\n')[1]!.replace(/^\d+/, String(id))}\n`);

/** What another process does after the build read the dataset and before it writes (onStart), `n`: the how-many-th build. */
type Meanwhile = (at: { data: string; site: string; log: Buffer }, n: number) => void;

/** A writable server of the site `site` as site-writers.ts records it beside the site: the process `pid`. */
const writerRecord = (site: string, pid: number) => {
  const path = join(dirname(site), `.${basename(site)}.writer-${pid}-0badc0de`);
  writeFileSync(path, `${pid}\n`);
  return path;
};

/** A writable server of another site logs the city of `log`; one of this site too (recorded first, its marker put) when `ownWriter`. */
const logged =
  (ownWriter: boolean): Meanwhile =>
  ({ data, site, log }, n) => {
    if (n > 1) return;
    if (ownWriter) {
      writerRecord(site, process.pid);
      writeFileSync(join(site, BEHIND_PATH), 'behind\n');
    }
    writeFileSync(CityLog.of(realpathSync(data)).path, log);
  };

const OWN_LOGGED = logged(true);

interface Outcome extends SiteState {
  readonly error?: RegExp;
  /** A line the build logs. */
  readonly said?: RegExp;
}

describe('a build whose dataset changed after it read it, before its swap', () => {
  it.each<[string, Meanwhile, Outcome]>([
    ['nothing changed: swapped in, current, not marked', () => {}, { holdsAll: true, marked: false }],
    [
      'the file changed otherwise than by a recorded fold (a city added by hand): not swapped in; built again, current',
      ({ data }, n) => n === 1 && addRow(data, 98),
      { holdsAll: true, marked: false },
    ],
    [
      'a writable server of the site (recorded, then its marker put) logged a city: swapped in, left marked behind (its catch-up builds the city in), said',
      OWN_LOGGED,
      { holdsAll: false, marked: true, said: /stays marked behind its dataset .*: 1 city logged since it was read$/ },
    ],
    [
      'a writable server of another site logged a city, none of this site recorded: swapped in unmarked (its clients were promised none), said',
      logged(false),
      {
        holdsAll: false,
        marked: false,
        said: /: 1 city logged into .* since it was read \(by a writable server of another site\) are not in its files: build again to include them/,
      },
    ],
    [
      'the file changed before every swap: refused after 3 builds, the site left as it was, said',
      ({ data }, n) => addRow(data, 90 + n),
      { holdsAll: false, marked: false, error: /kept changing while .* was built from it \(3 times.*left as it was/ },
    ],
  ])('%s', async (label, meanwhile, expected) => {
    const name = label
      .split(' ')
      .slice(0, 8)
      .join('-')
      .replace(/[^\w-]/g, '');
    const { dir, data, site } = await kitPlace(name, {});
    // The dataset the build reads is not the site's: it writes and swaps.
    addRow(data, 97);
    // A log holding one city, as a writable server appends it.
    const scratch = join(dir, 'scratch.csv');
    await CityLog.of(scratch).append([makeCity(99)]);
    const log = await readFile(CityLog.of(scratch).path);
    let builds = 0;
    const lines: string[] = [];
    const error = await build({
      data,
      out: site,
      ...SETTINGS,
      log: (line) => lines.push(line),
      onStart: () => meanwhile({ data, site, log }, ++builds),
    }).then(
      () => undefined,
      (e: Error) => e,
    );
    const { holdsAll, marked } = await siteState(data, site);
    const { said, ...outcome } = expected;
    expect({ holdsAll, marked, ...(error && { error: error.message }) }).toEqual({
      ...outcome,
      ...(expected.error && { error: expect.stringMatching(expected.error) }),
    });
    if (said) expect(lines).toContainEqual(expect.stringMatching(said));
    // The invariant: never older than a city the site's own writable server acknowledged without the marker.
    if (meanwhile === OWN_LOGGED) expect(holdsAll || marked).toBe(true);
  });
});

describe('a writable server of the site killed (its record left beside the site) and a build of the site', () => {
  it.each<[string, { killed: 'before the build' | 'after the build read'; marked: boolean; recordLeft: boolean }]>([
    [
      'killed before the build: what it logged folded in and built, its record removed; a city another site logged meanwhile leaves the site unmarked',
      { killed: 'before the build', marked: false, recordLeft: false },
    ],
    [
      'killed after the build read (it may have acknowledged what was logged meanwhile): the site marked behind, its record left for the next build',
      { killed: 'after the build read', marked: true, recordLeft: true },
    ],
  ])('%s', async (_, { killed, marked, recordLeft }) => {
    const { dir, data, site } = await kitPlace(`killed-${killed.replace(/\W+/g, '-')}`, {});
    const pid = await deadPid();
    const target = realpathSync(data);
    // A log line of a city 99, as a writable server appends it.
    const scratch = join(dir, 'scratch.csv');
    await CityLog.of(scratch).append([makeCity(99)]);
    const line = await readFile(CityLog.of(scratch).path);
    // What the killed server logged: in the dataset once the build read it (folded in first).
    await CityLog.of(target).append([makeCity(98)]);
    let record = killed === 'before the build' ? writerRecord(site, pid) : '';
    const error = await build({
      data,
      out: site,
      ...SETTINGS,
      onStart: () => {
        if (killed === 'after the build read') record = writerRecord(site, pid);
        // Logged after the read (another site's writable server, or the killed one before it died).
        appendFileSync(CityLog.of(target).path, line);
      },
    }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeUndefined();
    const inFiles = await filesIds(site);
    expect({
      folded: inFiles.includes(98),
      loggedAfter: inFiles.includes(99),
      marked: lstatSync(join(site, BEHIND_PATH), { throwIfNoEntry: false }) !== undefined,
      recordLeft: lstatSync(record, { throwIfNoEntry: false }) !== undefined,
    }).toEqual({ folded: true, loggedAfter: false, marked, recordLeft });
  });
});

/** A pid no process has: a process's that has exited. */
async function deadPid(): Promise<number> {
  const { child, exited } = spawnNode(['-e', '']);
  await exited;
  return child.pid!;
}

/** The ids the site's files hold. */
const filesIds = async (site: string) =>
  (JSON.parse(await readFile(join(site, '_cities-api', 'cities.json'), 'utf8')) as { id: number }[]).map((c) => c.id);

describe("a build that cannot take the dataset's lock (a writable server adding cities holds it)", () => {
  it.each<[string, string[], RegExp]>([
    ['--lock-wait 0: gives up at once', ['--lock-wait', '0'], /^(?!.*waited)/],
    ['--lock-wait 1: gives up after a second, saying so', ['--lock-wait', '1'], /\(waited 1 s\)/],
  ])('%s; the message names the lock file, its holder and what to do', async (label, args, waited) => {
    const { dir, data, site } = await kitPlace(`lock-${label.slice(12, 13)}`);
    const lock = join(dir, '.cities.csv.lock');
    // This process: alive, and not the build's.
    writeFileSync(lock, `${process.pid}\n`);
    const { code, stderr } = await spawnCli(['build', '--data', data, '--site', site, ...SMALL_SITE, ...args]).exited;
    expect({ code, stderr }).toEqual({ code: 1, stderr: expect.stringMatching(waited) });
    for (const part of [lock, `pid ${process.pid}`, '(--lock-wait)', `delete ${lock}`]) expect(stderr).toContain(part);
    // The site was left as it was: none.
    expect(lstatSync(site, { throwIfNoEntry: false })).toBeUndefined();
  });
});

describe("a build that cannot take the site's lock at once (another build of the site holds it)", () => {
  it.each<[string, string[], { releasedAfter?: number; code: number; said: RegExp }]>([
    ['--lock-wait 0: gives up at once', ['--lock-wait', '0'], { code: 1, said: /^(?![^]*waited)/ }],
    ['--lock-wait 1: gives up after a second, saying so', ['--lock-wait', '1'], { code: 1, said: /\(waited 1 s\)/ }],
    [
      'by default (10 s): builds once the other build is done (2 s later)',
      [],
      { releasedAfter: 2000, code: 0, said: /^(?![^]*another build)/ },
    ],
  ])('%s', async (label, args, expected) => {
    const { dir, data, site } = await kitPlace(`site-lock-${label.split(':')[0]!.replace(/\W+/g, '-')}`);
    const lock = join(dir, '.site.lock');
    // This process: alive, and not the build's.
    writeFileSync(lock, `${process.pid}\n`);
    const started = performance.now();
    if (expected.releasedAfter) setTimeout(() => rmSync(lock), expected.releasedAfter);
    const { code, stderr } = await spawnCli(['build', '--data', data, '--site', site, ...SMALL_SITE, ...args]).exited;
    expect({ code, stderr }).toEqual({
      code: expected.code,
      stderr: expect.stringMatching(expected.said),
    });
    if (expected.code === 0) {
      expect(performance.now() - started).toBeGreaterThanOrEqual(expected.releasedAfter!);
      expect(lstatSync(join(site, MANIFEST_PATH), { throwIfNoEntry: false })).toBeDefined();
      return;
    }
    const parts = [
      `another build of ${site} is running`,
      `pid ${process.pid}`,
      lock,
      '(--lock-wait)',
      `delete ${lock}`,
    ];
    for (const part of parts) expect(stderr).toContain(part);
    // The site was left as it was: none; the other build's lock is still its own.
    expect(lstatSync(site, { throwIfNoEntry: false })).toBeUndefined();
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid}\n`);
  });
});

/**
 * A build of a dataset of 1 MB or more (in a thread of its own), its swap checked against the
 * dataset as it was before `meanwhile` ran: what it threw, if anything.
 */
/** A directory of its own under root: the kit's cities11.csv as its dataset, and where its site goes (built first when `built`). */
async function kitPlace(name: string, built?: { readonly baseUrl?: string }) {
  const dir = join(root, name);
  await mkdir(dir);
  const data = join(dir, 'cities.csv');
  const site = join(dir, 'site');
  await copyFile(join(KIT, 'cities11.csv'), data);
  if (built) await build({ data, out: site, ...built, ...SETTINGS });
  return { dir, data, site };
}

async function threadedBuild(name: string, lockWait: number, meanwhile: (data: string) => unknown) {
  const dir = join(root, name);
  await mkdir(dir);
  const data = join(dir, 'cities.csv');
  await writeDataset(data, manyCities(6000, 'Thread'));
  expect(lstatSync(data).size).toBeGreaterThanOrEqual(1024 * 1024);
  const site = join(dir, 'site');
  const read = await readFileOnly(data);
  await meanwhile(data);
  const swapCheck = { dataset: data, read, site: null, lockWait };
  const error = await runBuild({ data, out: site, ...SETTINGS, swapCheck }).then(
    () => null,
    (e: Error) => e,
  );
  return { dir, site, error };
}

describe('a build in a thread of its own (a dataset of 1 MB or more)', () => {
  it('its swap is refused the same when the dataset is no longer what it read: DatasetMoved, of its class, the site as it was', async () => {
    // The file changed after the state was taken, before the build reads it: as if changed before its swap.
    const { site, error } = await threadedBuild('threaded', 1000, (data) => addRow(data, 9999));
    expect(error).toBeInstanceOf(DatasetMoved);
    expect(lstatSync(site, { throwIfNoEntry: false })).toBeUndefined();
  }, 60_000);

  it("its swap waits for the dataset's lock a holder in this thread has (serve({ writable })'s POSTs beside build() in one process), never taking it over", async () => {
    // The writable server's turn: the lock is this process's (its pid), held in this thread.
    let release: Release | undefined;
    let lock = '';
    try {
      const { dir, site, error } = await threadedBuild('threaded-beside-writer', 300, async (data) => {
        release = await lockDataset(data);
      });
      expect([error?.constructor, error?.message]).toEqual([
        LockBusyError,
        expect.stringMatching(
          new RegExp(`^another holder in this process \\(pid ${process.pid}\\) .*\\(waited 0.3 s\\)$`),
        ),
      ]);
      // Nothing swapped in, and the holder's lock is still there for it to release.
      expect(lstatSync(site, { throwIfNoEntry: false })).toBeUndefined();
      lock = join(dir, '.cities.csv.lock');
      expect(readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${process.pid}\\n`));
    } finally {
      await release?.();
    }
    expect(lstatSync(lock, { throwIfNoEntry: false })).toBeUndefined();
  }, 60_000);
});

/** A city as a POST creates it: what the writer is given (its id and times are the writer's). */
const newCity = (name: string): NewCity => {
  const { id: _, created_at: __, updated_at: ___, ...rest } = makeCity(0, { name });
  return rest;
};

interface SiteState {
  /** The site's files hold every city of the dataset (its file and its log). */
  readonly holdsAll: boolean;
  readonly marked: boolean;
}

/** Whether the site's files hold every city of the dataset (its file plus its log), and whether it is marked behind. */
async function siteState(data: string, site: string): Promise<SiteState> {
  const inDataset = [
    ...(await readDataset(data)).ids,
    ...(await CityLog.of(realpathSync(data)).read()).cities.map((c) => c.id),
  ];
  const inFiles = (
    JSON.parse(await readFile(join(site, '_cities-api', 'cities.json'), 'utf8')) as { id: number }[]
  ).map((c) => c.id);
  return {
    holdsAll: inDataset.every((id) => inFiles.includes(id)),
    marked: lstatSync(join(site, BEHIND_PATH), { throwIfNoEntry: false }) !== undefined,
  };
}

/**
 * A writable server's site builder whose next catch-up build, once `hold()` asked for it, waits at
 * the publish: the writer has read the dataset and staged it, its build not started. `held` says
 * it is there; `release()` lets the build run; `after` is the site and dataset as the build left
 * them (taken as soon as it settled, before the writer goes on: its commit, its `caughtUp`).
 */
class HeldBuilder extends SiteBuilder {
  private gate: { reached: () => void; opened: Promise<void> } | null = null;
  held: Promise<void> = Promise.resolve();
  release: () => void = () => {};
  after: Promise<SiteState> = new Promise(() => {});

  constructor(
    options: ConstructorParameters<typeof SiteBuilder>[0],
    private readonly state: () => Promise<SiteState>,
  ) {
    super(options);
  }

  hold(): void {
    let reached!: () => void;
    let opened!: () => void;
    this.held = new Promise<void>((resolve) => (reached = resolve));
    this.gate = { reached, opened: new Promise<void>((resolve) => (opened = resolve)) };
    this.release = opened;
  }

  override async publish(data: string, swapCheck?: SwapCheck): Promise<void> {
    const gate = this.gate;
    this.gate = null;
    if (!gate) return super.publish(data, swapCheck);
    let settled!: (state: SiteState) => void;
    this.after = new Promise<SiteState>((resolve) => (settled = resolve));
    gate.reached();
    await gate.opened;
    try {
      return await super.publish(data, swapCheck);
    } finally {
      settled(await this.state());
    }
  }
}

const TOKEN = 'stale-build-token-0123456789';
/** The site's settings as the CLI gives them, its base URL that of a deployment. */
const CLI_SITE = [...SMALL_SITE, '--base-url', 'http://x'];

/** Another writable server of the site, a process of its own (its staged dataset named by its pid, not this one's). */
const otherWriter = (site: string, data: string) =>
  startCli([site, '--data', data, '--port', '0', '--writable', ...CLI_SITE], { CITIES_API_TOKEN: TOKEN });

/**
 * What comes between the read of the dataset by `held`'s catch-up (a writable server in this
 * process) and its build's swap; returns the state the invariant is checked in.
 */
type Between = (at: {
  data: string;
  site: string;
  held: HeldBuilder;
  writer: LoggedCityWriter;
  other: Awaited<ReturnType<typeof otherWriter>>;
}) => Promise<SiteState>;

describe("a writable server's catch-up build, another builder of the site coming between its read of the dataset and its swap", () => {
  it.each<[string, Between, SiteState]>([
    [
      'a city is logged, then a build (cities-api build) folds both in and swaps its site in: the held build does not replace it unmarked',
      async ({ data, site, held, writer }) => {
        await writer.create(newCity('Logged meanwhile'));
        const { code } = await spawnCli(['build', '--data', data, '--site', site, ...CLI_SITE]).exited;
        expect(code).toBe(0);
        held.release();
        return held.after;
      },
      { holdsAll: true, marked: false },
    ],
    [
      'another writable server adds a city, folds it in with the logged one and swaps its site in: the held build does not replace it unmarked',
      async ({ data, held, other }) => {
        expect((await createAt(other.url, TOKEN, 'Other')).status).toBe(201);
        await caughtUp(data);
        held.release();
        return held.after;
      },
      { holdsAll: true, marked: false },
    ],
    [
      'another writable server adds a city (then stopped, SIGSTOP) while the held build runs: the held writer caught up, the site stays marked (its files lack that city)',
      async ({ data, site, held, writer, other }) => {
        expect((await createAt(other.url, TOKEN, 'Other')).status).toBe(201);
        // Its own catch-up, a quarter of a second later, never comes while it is stopped.
        other.child.kill('SIGSTOP');
        try {
          held.release();
          await writer.idle();
          return await siteState(data, site);
        } finally {
          other.child.kill('SIGCONT');
        }
      },
      { holdsAll: false, marked: true },
    ],
  ])(
    '%s',
    async (label, between, expected) => {
      const { data, site } = await kitPlace(`writers-${label.split(':')[0]!.replace(/\W+/g, '-')}`, {
        baseUrl: 'http://x',
      });
      const lines: string[] = [];
      const held = new HeldBuilder(
        { dir: site, serverUrl: 'http://x', baseUrl: 'http://x', lockWait: 10_000, ...SETTINGS },
        () => siteState(data, site),
      );
      // Started first: its first build folds what is logged, as a build does.
      const other = await otherWriter(site, data);
      const { writer, started, close } = await openWritable({
        data,
        dir: site,
        builder: held,
        answer: async () => {},
        lockWait: 10_000,
        log: (line) => lines.push(line),
      });
      try {
        await started();
        held.hold();
        await writer.create(newCity('Held'));
        await held.held;
        const state = await between({ data, site, held, writer, other });
        // Never older than the dataset without the marker: nginx would serve pages lacking a city acknowledged.
        expect(state.holdsAll || state.marked).toBe(true);
        expect(state).toEqual(expected);
        await writer.idle();
        await caughtUp(data);
        // Once every writer is caught up, the site holds every city and is no longer marked.
        expect(await siteState(data, site)).toEqual({ holdsAll: true, marked: false });
      } finally {
        held.release();
        await close();
        await other.stop();
      }
    },
    120_000,
  );
});

/** What goes on beside a `cities-api build` of the site: started before it, stopped (the returned function) once it ended. */
type Beside = (at: { data: string; site: string }) => Promise<() => Promise<void>>;

/** Calls `step` again and again (every `ms`) until stopped: its stop waits for the step under way. */
function again(step: () => Promise<void>, ms = 0): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await step();
      await sleep(ms);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

describe('cities-api build while the dataset keeps changing beside it', () => {
  it.each<[string, Beside, { code: number; said: RegExp; during?: SiteState; after: SiteState }]>([
    [
      'a writable server takes POSTs without pause: built and swapped in marked behind (said), never older than the dataset unmarked; the POSTs stopped, the server catches the site up and unmarks it',
      async ({ data, site }) => {
        const server = await otherWriter(site, data);
        const statuses: number[] = [];
        // Four clients, each POSTing as soon as its last POST was answered.
        const clients = [0, 1, 2, 3].map((client) => {
          let n = 0;
          return again(async () => void statuses.push((await createAt(server.url, TOKEN, `C${client}-${n++}`)).status));
        });
        while (statuses.length < 20) await sleep(10);
        return async () => {
          await Promise.all(clients.map((stop) => stop()));
          expect(statuses.filter((status) => status !== 201)).toEqual([]);
          await caughtUp(data);
          await server.stop();
        };
      },
      {
        code: 0,
        said: /stays marked behind its dataset .*changed while the site was built \(a writable server adding cities\? its catch-up builds them in/,
        after: { holdsAll: true, marked: false },
      },
    ],
    [
      'the dataset file rewritten without pause (edited, no city appended): refused after 3 builds, the site left as it was, said',
      async ({ data }) => {
        const text = await readFile(data, 'utf8');
        let n = 0;
        const edit = again(async () => {
          // Replaced whole (a new file renamed over it, as editors save), a city's name edited each time.
          writeFileSync(`${data}.edit`, text.replace(/^(\d+),[^,]*/m, `$1,Edited ${n++}`));
          renameSync(`${data}.edit`, data);
        }, 5);
        return edit;
      },
      {
        code: 1,
        said: /kept changing while .* was built from it \(3 times.*left as it was; build again once it is quiet/,
        during: { holdsAll: true, marked: false },
        after: { holdsAll: true, marked: false },
      },
    ],
  ])(
    '%s',
    async (label, beside, expected) => {
      const { data, site } = await kitPlace(`beside-${label.split(':')[0]!.replace(/\W+/g, '-')}`, {
        baseUrl: 'http://x',
      });
      const manifest = await readFile(join(site, MANIFEST_PATH));
      const stop = await beside({ data, site });
      let during: SiteState;
      let exit: Exit;
      try {
        exit = await spawnCli(['build', '--data', data, '--site', site, ...CLI_SITE]).exited;
        during = await siteState(data, site);
      } finally {
        await stop();
      }
      expect({ code: exit.code, said: `${exit.stdout}${exit.stderr}` }).toEqual({
        code: expected.code,
        said: expect.stringMatching(expected.said),
      });
      // Never older than the dataset without the marker; refused, the site as it was.
      expect(during.holdsAll || during.marked).toBe(true);
      if (expected.during) expect(during).toEqual(expected.during);
      if (expected.code) expect((await readFile(join(site, MANIFEST_PATH))).equals(manifest)).toBe(true);
      expect(await siteState(data, site)).toEqual(expected.after);
    },
    120_000,
  );
});

/** What runs beside `cities-api build` of site A: writable servers of other sites (and of A) on its dataset. */
interface OtherSites {
  /** Writable servers of these sites (A is `site`), clients POSTing to each without pause. */
  readonly writers: readonly ('A' | 'B')[];
}

describe('cities-api build of a site A while a writable server of another site B (same dataset) takes POSTs without pause', () => {
  it.each<[string, OtherSites, { said: RegExp; marked?: boolean }]>([
    [
      "no writable server serves A: built (never 'kept changing'), swapped in unmarked, saying how many cities logged since are not in its files",
      { writers: ['B'] },
      {
        said: /\d+ cit(y|ies) logged into .* since it was read \(by a writable server of another site\) are not in its files: build again to include them/,
        marked: false,
      },
    ],
    [
      "a writable server of A takes POSTs too: built (never 'kept changing'), swapped in marked behind, said",
      { writers: ['A', 'B'] },
      { said: /stays marked behind its dataset .*: \d+ cit(y|ies) logged since it was read/ },
    ],
  ])(
    '%s',
    async (label, other, expected) => {
      const { dir, data, site } = await kitPlace(`other-site-${label.split(':')[0]!.replace(/\W+/g, '-')}`, {
        baseUrl: 'http://x',
      });
      const sites = { A: site, B: join(dir, 'site-b') };
      const servers = await Promise.all(other.writers.map((name) => otherWriter(sites[name], data)));
      const statuses: number[] = [];
      const clients = servers.flatMap((server) =>
        [0, 1].map((client) => {
          let n = 0;
          return again(async () => void statuses.push((await createAt(server.url, TOKEN, `C${client}-${n++}`)).status));
        }),
      );
      const exits: Exit[] = [];
      let marked: boolean;
      try {
        while (statuses.length < 20) await sleep(10);
        // Three builds one after the other: each must be built and swapped in.
        for (let i = 0; i < 3; i++)
          exits.push(await spawnCli(['build', '--data', data, '--site', site, ...CLI_SITE]).exited);
        marked = lstatSync(join(site, BEHIND_PATH), { throwIfNoEntry: false }) !== undefined;
      } finally {
        await Promise.all(clients.map((stop) => stop()));
        await caughtUp(data);
        await Promise.all(servers.map((server) => server.stop()));
      }
      expect(statuses.filter((status) => status !== 201)).toEqual([]);
      expect(exits.map(({ code, stdout, stderr }) => ({ code, said: `${stdout}${stderr}` }))).toEqual(
        exits.map(() => ({ code: 0, said: expect.stringMatching(expected.said) })),
      );
      if (expected.marked !== undefined) expect(marked).toBe(expected.marked);
    },
    180_000,
  );
});

describe("a build that read the dataset before a writable server of another site folded cities into it (a real server's fold, recorded)", () => {
  it.each<[string, { servedByWriter: boolean }, { sinceRead: SwapOutcome; holdsAll: boolean; marked: boolean }]>([
    [
      'no writable server serves the site: swapped in unmarked (never refused as changed), the city counted',
      { servedByWriter: false },
      { sinceRead: { cities: 1, marked: false }, holdsAll: false, marked: false },
    ],
    [
      'a writable server serves the site (recorded): swapped in marked behind',
      { servedByWriter: true },
      { sinceRead: { cities: 1, marked: true }, holdsAll: false, marked: true },
    ],
  ])(
    '%s',
    async (label, { servedByWriter }, expected) => {
      const { dir, data, site } = await kitPlace(`folded-${label.split(':')[0]!.replace(/\W+/g, '-')}`, {
        baseUrl: 'http://x',
      });
      const server = await otherWriter(join(dir, 'site-b'), data);
      const unrecord = servedByWriter ? await recordWriter(site) : async () => {};
      try {
        // What the build reads: the file as it is now, a city added since the site was built (a copy, so that the fold below does not change it).
        addRow(data, 97);
        const read = await readFileOnly(data);
        const snapshot = join(dir, 'snapshot.csv');
        await copyFile(data, snapshot);
        expect((await createAt(server.url, TOKEN, 'Folded meanwhile')).status).toBe(201);
        await caughtUp(data);
        const swapCheck = { dataset: data, read, site: siteSignature(site), lockWait: 10_000 };
        const result = await runBuild({ data: snapshot, out: site, ...SETTINGS, baseUrl: 'http://x', swapCheck });
        expect({ sinceRead: result.sinceRead, ...(await siteState(data, site)) }).toEqual(expected);
      } finally {
        await unrecord();
        await server.stop();
      }
    },
    60_000,
  );
});
