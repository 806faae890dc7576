import { spawn } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { appendFile, copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCurrent } from '../src/app/behind-site.js';
import { CityLog } from '../src/dataset/city-log.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { BEHIND_PATH } from '../src/site/behind.js';
import { spawnCli } from './crash-helpers.js';
import { KIT, makeCity, tempDir } from './helpers.js';
import { createAt, SMALL_SITE, servedAt, smallWritable, startCli, writableCli } from './serve-helpers.js';

// A writable server stopped (SIGTERM) or killed (SIGKILL) while its site's files lack a city it
// acknowledged: the site stays marked behind (the generated nginx config then sends every request
// to the live server), the city folded into the dataset file (a clean stop) or only in its
// write-ahead log (killed). Whatever reads the dataset next reads the file plus its log, and the
// build that holds the city removes the marker; what cannot build says so.

const TOKEN = 'stopped-token-0123456789';
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-stopped-')));
afterAll(() => cleanup());

const SIGNALS = ['SIGTERM', 'SIGKILL'] as const;
type Signal = (typeof SIGNALS)[number];

/** A site and its dataset as a writable server left them, stopped by `signal` once it acknowledged a city named Stopped its files lack. */
async function stoppedBehind(signal: Signal, name: string) {
  const dir = join(root, `${name}-${signal}`);
  await mkdir(dir);
  const data = join(dir, 'cities.csv');
  await copyFile(join(KIT, 'cities11.csv'), data);
  const site = join(dir, 'site');
  // Another build holds the site's lock: the catch-up cannot build the city in.
  const holder = spawn('sleep', ['600']);
  const server = await writableCli(site, data, TOKEN);
  try {
    await writeFile(join(dir, '.site.lock'), `${holder.pid}\n`);
    expect((await createAt(server.url, TOKEN, 'Stopped')).status).toBe(201);
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill(signal);
    await exited;
  } finally {
    await server.stop();
    holder.kill();
  }
  await rm(join(dir, '.site.lock'));
  const state = async () => ({
    marked: lstatSync(join(site, BEHIND_PATH), { throwIfNoEntry: false }) !== undefined,
    inFiles: (await readFile(join(site, '_cities-api', 'cities.json'), 'utf8')).includes('"Stopped"'),
    dataset: (await readDataset(data))
      .toCities()
      .map((c) => c.name_en)
      .slice(11),
    logged: (await CityLog.of(data).read()).cities.map((c) => c.name_en),
  });
  expect(await state()).toEqual({
    marked: true,
    inFiles: false,
    // Folded in by a clean stop; else in the log.
    dataset: signal === 'SIGTERM' ? ['Stopped'] : [],
    logged: signal === 'SIGTERM' ? [] : ['Stopped'],
  });
  return { dir, data, site, state };
}

/** Every entry under `dir` (dot files, the log, the site's files), with its bytes and modification time. */
function snapshot(dir: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const bytes = entry.isFile() ? readFileSync(path).toString('base64') : '';
    entries[path] = `${lstatSync(path).mtimeMs} ${bytes}`;
  }
  return entries;
}

/** The state once every city is built in: the marker gone, the city in the files and the file, the log empty. */
const CURRENT = { marked: false, inFiles: true, dataset: ['Stopped'], logged: [] };

describe('the next start of a writable server', () => {
  it.each(SIGNALS)(
    'after %s: folds the city in, keeps the marker until its first build holds it, then unmarks the site',
    async (signal) => {
      const { data, site, state } = await stoppedBehind(signal, 'writable');
      let markedAtBuild: boolean | undefined;
      const next = await smallWritable(site, data, TOKEN, {
        firstBuild: { onStart: () => (markedAtBuild = lstatSync(join(site, BEHIND_PATH)).isFile()) },
      });
      try {
        expect(markedAtBuild).toBe(true);
        expect(await state()).toEqual(CURRENT);
        expect((await servedAt(next.url)).includes('Stopped')).toBe(true);
      } finally {
        await next.close();
      }
    },
    60_000,
  );
});

describe('every other command reads the dataset as the file plus its log', () => {
  it.each(
    SIGNALS.flatMap((signal) => (['serve --data', 'build --data'] as const).map((next) => [signal, next] as const)),
  )(
    'after %s, %s (not writable): the city folded into the file first and built, the marker removed',
    async (signal, next) => {
      const { data, site, state } = await stoppedBehind(signal, next.split(' ')[0]!);
      if (next === 'build --data') {
        const { exited } = spawnCli(['build', '--data', data, '--site', site, ...SMALL_SITE]);
        const { code, stdout } = await exited;
        expect({
          code,
          removed: stdout.includes(`no longer marked behind (${BEHIND_PATH} removed)`),
          // The marker is no file of the user's, to be told it was kept.
          kept: /^kept /m.test(stdout),
        }).toEqual({ code: 0, removed: true, kept: false });
        expect(await state()).toEqual(CURRENT);
        return;
      }
      const server = await startCli([site, '--data', data, '--port', '0']);
      try {
        expect(await servedAt(server.url)).toContain('Stopped');
        expect(await state()).toEqual(CURRENT);
      } finally {
        await server.stop();
      }
    },
    60_000,
  );

  it.each(SIGNALS)(
    'after %s, serve --site without a dataset: says at start that the site is marked behind and how to catch up, and answers from the site as it is',
    async (signal) => {
      const { dir, site, state } = await stoppedBehind(signal, 'site');
      const before = snapshot(dir);
      const server = await startCli([site, '--port', '0']);
      try {
        expect(server.output()).toMatch(
          new RegExp(
            `^warning: ${site} is marked behind its dataset .*: answers lack the cities created since its last build.*to catch up, build it again from its dataset \\(cities-api build\\), or serve it with --data \\(and --writable\\)`,
            'm',
          ),
        );
        expect(await servedAt(server.url)).toHaveLength(11);
      } finally {
        await server.stop();
      }
      expect({ state: await state(), unchanged: snapshot(dir) }).toEqual({
        state: {
          ...CURRENT,
          marked: true,
          inFiles: false,
          ...(signal === 'SIGKILL' && { dataset: [], logged: ['Stopped'] }),
        },
        unchanged: before,
      });
    },
    60_000,
  );

  it('validate with a log beside the dataset: counts the logged city as not folded in yet, and writes nothing (bytes and times)', async () => {
    const { dir, data } = await stoppedBehind('SIGKILL', 'validate');
    const before = snapshot(dir);
    const { code, stdout } = await spawnCli(['validate', '--data', data]).exited;
    expect({ code, stdout }).toEqual({
      code: 0,
      stdout: expect.stringMatching(
        /^.*cities\.csv: 11 cities, valid\n.*cities\.csv: and 1 city \(id \d+\) created by a writable server, logged in .*\.cities\.csv\.wal, not folded into the file yet: build and serve --data fold them in first\n$/,
      ),
    });
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);
});

describe("a build removes the site's behind marker only if its files hold every city of the dataset its own writable servers may have acknowledged", () => {
  const marker = (site: string) => join(site, BEHIND_PATH);
  it.each([
    ['nothing changed while it built', true, async () => {}, false, /no longer marked behind/],
    [
      'a city logged meanwhile by a writable server of the site (recorded beside it)',
      true,
      async (data: string, site: string) => {
        await writeFile(join(dirname(site), `.${basename(site)}.writer-${process.pid}-0badc0de`), `${process.pid}\n`);
        await CityLog.of(data).append([makeCity(99)]);
      },
      true,
      /stays marked behind .*changed while the site was built/,
    ],
    [
      'another site logged a city meanwhile (its writable server; none of this site recorded): its clients were promised none',
      true,
      (data: string) => CityLog.of(data).append([makeCity(99)]),
      false,
      [
        /no longer marked behind/,
        /: 1 city logged into .* since it was read \(by a writable server of another site\) are not in its files: build again/,
      ],
    ],
    [
      'the file edited meanwhile',
      true,
      (data: string) => appendFile(data, `${readFileSync(data, 'utf8').split('\n')[1]!.replace(/^\d+/, '98')}\n`),
      true,
      /stays marked behind .*changed while the site was built/,
    ],
    [
      'no marker before it built, one put there meanwhile (a writable server starting)',
      false,
      (_: string, site: string) => writeFile(marker(site), 'behind\n'),
      true,
      null,
    ],
  ])('%s', async (label, markedBefore, meanwhile, markedAfter, said) => {
    const dir = join(root, `keep-${label.split(' ').slice(0, 3).join('-')}`);
    const site = join(dir, 'site');
    await mkdir(join(site, '_cities-api'), { recursive: true });
    const data = join(dir, 'cities.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    if (markedBefore) await writeFile(marker(site), 'behind\n');
    const told: string[] = [];
    // A build that writes nothing (its files up to date): the marker is left to buildCurrent.
    await buildCurrent(data, site, { lockWait: 1000, log: (line) => told.push(line) }, async () => {
      await meanwhile(data, site);
      return {};
    });
    expect(lstatSync(marker(site), { throwIfNoEntry: false })?.isFile() ?? false).toBe(markedAfter);
    expect(told).toEqual([said ?? []].flat().map((line) => expect.stringMatching(line)));
  });
});

describe("a writable server's stop whose fold finds the dataset's lock held by another process (past --lock-wait)", () => {
  it('exits 0 saying the cities stay logged for the next start; the log and its writer record kept, and the next build folds the city in', async () => {
    const dir = join(root, 'busy-at-stop');
    await mkdir(dir);
    const data = join(dir, 'cities.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const site = join(dir, 'site');
    const holder = spawn('sleep', ['600']);
    const args = [site, '--data', data, '--port', '0', '--writable', '--lock-wait', '1', ...SMALL_SITE];
    const server = await startCli(args, { CITIES_API_TOKEN: TOKEN });
    let code: number | null = null;
    try {
      // The site's lock held: the catch-up builds nothing; then the dataset's: the stop cannot fold.
      await writeFile(join(dir, '.site.lock'), `${holder.pid}\n`);
      expect((await createAt(server.url, TOKEN, 'Stopped')).status).toBe(201);
      await writeFile(join(dir, '.cities.csv.lock'), `${holder.pid}\n`);
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      code = await exited;
    } finally {
      await server.stop();
      holder.kill();
    }
    await rm(join(dir, '.site.lock'));
    await rm(join(dir, '.cities.csv.lock'));
    const names = async () => ({
      dataset: (await readDataset(data))
        .toCities()
        .map((c) => c.name_en)
        .slice(11),
      logged: (await CityLog.of(data).read()).cities.map((c) => c.name_en),
      records: readdirSync(dir).filter((name) => name.startsWith('.site.writer-')).length,
    });
    expect({ code, said: server.output(), ...(await names()) }).toEqual({
      code: 0,
      said: expect.stringMatching(
        /^warning: the city logged in .*\.cities\.csv\.wal not folded into .*cities\.csv at stop \(.*\): kept there, the next build or serve --data folds them in first$/m,
      ),
      dataset: [],
      logged: ['Stopped'],
      records: 1,
    });
    const { exited } = spawnCli(['build', '--data', data, '--site', site, ...SMALL_SITE]);
    expect((await exited).code).toBe(0);
    expect(await names()).toEqual({ dataset: ['Stopped'], logged: [], records: 0 });
  }, 60_000);
});
