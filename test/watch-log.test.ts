import { spawn } from 'node:child_process';
import { readdirSync, realpathSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendCities } from '../src/dataset/append-cities.js';
import { CityLog } from '../src/dataset/city-log.js';
import { withLogged } from '../src/dataset/log-fold.js';
import { LoggedIdTaken } from '../src/dataset/logged-in-file.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { KIT, makeCity, tempDir } from './helpers.js';
import { createAt, SMALL_SITE, servedAt, startCli, writableCli } from './serve-helpers.js';

// serve --watch without --writable follows the dataset as every reader reads it: the file plus the
// cities a writable server (of another site, on the same dataset) logged beside it and has not
// folded in yet. It answers them once logged, and still once folded, never writing the dataset.

const TOKEN = 'watch-log-token-0123456789';
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-watch-log-')));
afterAll(() => cleanup());

/** A copy of the 11-city dataset in a directory of its own. */
async function dataset(name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir);
  const data = join(dir, 'cities.csv');
  await copyFile(join(KIT, 'cities11.csv'), data);
  return data;
}

describe('withLogged: the dataset a server that does not write it reads', () => {
  it.each<[string, (data: string) => Promise<void>, { staged: boolean; ids: number[] } | 'refused']>([
    ['no log: the file itself', async () => {}, { staged: false, ids: [] }],
    [
      'a city logged, not in the file: the file plus it, staged beside the file',
      (data) => CityLog.of(realpathSync(data)).append([makeCity(99)]),
      { staged: true, ids: [99] },
    ],
    [
      'a logged city already folded into the file (killed before the log was cut): the file itself',
      async (data) => {
        await appendCities(data, [makeCity(99)]);
        await CityLog.of(realpathSync(data)).append([makeCity(99)]);
      },
      { staged: false, ids: [99] },
    ],
    [
      "a logged city whose id the file holds as another record (a row of the user's given it): refused, nothing staged",
      async (data) => {
        await appendCities(data, [makeCity(99, { name: 'Mine' })]);
        await CityLog.of(realpathSync(data)).append([makeCity(99)]);
      },
      'refused',
    ],
  ])('%s', async (label, prepare, expected) => {
    const data = await dataset(`with-${label.split(/[ :,]/)[0]}-${label.length}`);
    await prepare(data);
    const before = await readFile(data);
    if (expected === 'refused') {
      const entries = readdirSync(dirname(data));
      // Taken as in the file, the logged city was left out of the answers, nothing said.
      await expect(withLogged(data)).rejects.toThrow(LoggedIdTaken);
      expect({ file: (await readFile(data)).equals(before), entries: readdirSync(dirname(data)) }).toEqual({
        file: true,
        entries,
      });
      return;
    }
    const source = await withLogged(data);
    try {
      const ids = [...(await readDataset(source.path)).ids].filter((id) => id > 90);
      expect({ staged: source.path !== data, ids }).toEqual(expected);
    } finally {
      await source.discard();
    }
    // Nothing written over the dataset, nothing left beside it.
    expect((await readFile(data)).equals(before)).toBe(true);
    if (source.path !== data) await expect(readFile(source.path)).rejects.toThrow(/ENOENT/);
  });
});

/** Polls `url` until it answers `name` `count` times, for at most `ms`; the names it answered last. */
async function answered(url: string, name: string, count: number, ms: number): Promise<string[]> {
  const deadline = performance.now() + ms;
  for (;;) {
    const names = await servedAt(url);
    if (names.filter((n) => n === name).length === count || performance.now() > deadline) return names;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('serve --watch (not writable) beside a writable server of another site on the same dataset', () => {
  it('answers a city once the writable server logged it (its catch-up held back), and once it folded it in; writes nothing', async () => {
    const data = await dataset('flow');
    const dir = join(root, 'flow');
    const reader = await startCli([join(dir, 'read-site'), '--data', data, '--watch', '--port', '0', ...SMALL_SITE]);
    // Another build holds the writable server's site: its catch-up cannot fold the city in.
    const holder = spawn('sleep', ['600']);
    const writer = await writableCli(join(dir, 'write-site'), data, TOKEN);
    try {
      await writeFile(join(dir, '.write-site.lock'), `${holder.pid}\n`);
      expect((await createAt(writer.url, TOKEN, 'Logged')).status).toBe(201);
      const logged = await answered(reader.url, 'Logged', 1, 20_000);
      const inFile = async () => (await readFile(data, 'utf8')).includes('Logged');
      expect({ answered: logged.filter((n) => n === 'Logged').length, inFile: await inFile() }).toEqual({
        answered: 1,
        inFile: false,
      });
      // The writable server catches up: the city folded into the file, the log emptied.
      await rm(join(dir, '.write-site.lock'));
      const deadline = performance.now() + 20_000;
      while (!(await inFile()) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect({ inFile: await inFile(), answered: (await answered(reader.url, 'Logged', 1, 5000)).length }).toEqual({
        inFile: true,
        answered: 12,
      });
    } finally {
      await writer.stop();
      await reader.stop();
      holder.kill();
    }
  }, 60_000);
});
