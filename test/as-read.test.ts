import { appendFileSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileOnly, readLogged, type Since, sinceRead } from '../src/dataset/as-read.js';
import { foldLog } from '../src/dataset/log-fold.js';
import { CityLog } from '../src/dataset/city-log.js';
import { makeCity, tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-as-read-')));
afterAll(() => cleanup());

// What a build read of a dataset (its file and its log's whole records), against the dataset at
// its swap, under the lock a writable server logs under: a record in the log is acknowledged only
// once whole, so a torn write after the last whole one (a server killed mid-append) holds none.
// A fold of the log into the file (another site's writable server's) is recorded beside it
// (fold-journal.ts): the file the build meets is the one it read plus logged cities.
describe('sinceRead: the dataset at a build swap against what the build read', () => {
  let n = 0;
  const TORN = '{"id": 9'; // a record cut short, no newline
  /** The log folded into the file as a writable server does (recorded), `say` told nothing. */
  const fold = (data: string, log: CityLog) => foldLog(data, realpathSync(data), log, () => {});
  /** The same, killed (or failed) between its commit and its log's drop: the file holds the records the log still begins with. */
  const killedFold = async (data: string, log: CityLog) => {
    const { head } = await log.read();
    await fold(data, log);
    writeFileSync(log.path, head);
  };
  it.each<[string, 'file and log' | 'file alone', (data: string, log: CityLog) => Promise<void> | void, Since]>([
    ['nothing changed', 'file and log', () => {}, { since: 'current', cities: 0 }],
    [
      'a torn write after the records the build read (a server killed mid-append)',
      'file and log',
      (_, log) => appendFileSync(log.path, TORN),
      { since: 'current', cities: 0 },
    ],
    ['a city logged since', 'file and log', (_, log) => log.append([makeCity(7)]), { since: 'grown', cities: 1 }],
    [
      'a city logged since, then a torn write',
      'file and log',
      async (_, log) => {
        await log.append([makeCity(7)]);
        appendFileSync(log.path, TORN);
      },
      { since: 'grown', cities: 1 },
    ],
    ['the log cut (folded into the file elsewhere)', 'file and log', (_, log) => log.cut(0), MOVED],
    [
      'a record the build read rewritten',
      'file and log',
      (_, log) => writeFileSync(log.path, readFileSync(log.path, 'utf8').replace('"One"', '"Two"')),
      MOVED,
    ],
    ['the dataset file changed', 'file and log', (data) => appendFileSync(data, '\n'), MOVED],
    [
      'the log the build held folded into the file, recorded: the build holds the dataset',
      'file and log',
      fold,
      { since: 'current', cities: 0 },
    ],
    [
      'the log the build held folded in (recorded), then a city logged',
      'file and log',
      async (data, log) => {
        await fold(data, log);
        await log.append([makeCity(7)]);
      },
      { since: 'grown', cities: 1 },
    ],
    [
      'a city logged, then folded in with the log the build held: no record says which part the build held',
      'file and log',
      async (data, log) => {
        await log.append([makeCity(7)]);
        await fold(data, log);
      },
      MOVED,
    ],
    [
      'the file alone read; the log folded in (recorded), a city logged, folded in again: every logged city',
      'file alone',
      async (data, log) => {
        await fold(data, log);
        await log.append([makeCity(7)]);
        await fold(data, log);
        await log.append([makeCity(8)]);
      },
      { since: 'grown', cities: 3 },
    ],
    [
      'the log the build held folded in (recorded), killed before it dropped them from the log: the build holds the dataset',
      'file and log',
      killedFold,
      { since: 'current', cities: 0 },
    ],
    [
      'the log the build held folded in (recorded), killed before the drop, then a city logged: that city alone',
      'file and log',
      async (data, log) => {
        await killedFold(data, log);
        await log.append([makeCity(7)]);
      },
      { since: 'grown', cities: 1 },
    ],
    [
      'the file alone read; a city logged, the log folded in (recorded), killed before the drop, a city logged: every logged city once',
      'file alone',
      async (data, log) => {
        await log.append([makeCity(7)]);
        await killedFold(data, log);
        await log.append([makeCity(8)]);
      },
      { since: 'grown', cities: 3 },
    ],
    [
      'the file alone read; the log folded in, its record lost',
      'file alone',
      async (data, log) => {
        await fold(data, log);
        rmSync(join(dirname(log.path), `.${basename(data)}.folds`));
      },
      MOVED,
    ],
    [
      'the file alone read; the log folded in (recorded), then the file changed',
      'file alone',
      async (data, log) => {
        await fold(data, log);
        appendFileSync(data, '\n');
      },
      MOVED,
    ],
    [
      'the file alone read; the file changed, then the log folded in (recorded from the changed file)',
      'file alone',
      async (data, log) => {
        appendFileSync(data, '\n');
        await fold(data, log);
      },
      MOVED,
    ],
  ])('%s (%s read)', async (_, reads, change, since) => {
    const data = join(root, `cities-${++n}.json`);
    writeFileSync(data, `[\n  ${JSON.stringify(makeCity(1))}\n]\n`);
    const target = await realpath(data);
    const log = CityLog.of(target);
    await log.append([makeCity(5, { name: 'One' })]);
    const read = reads === 'file alone' ? await readFileOnly(data) : (await readLogged(target, log)).read;
    await change(data, log);
    expect(await sinceRead(data, read)).toEqual(since);
  });
});

const MOVED: Since = { since: 'moved', cities: 0 };
