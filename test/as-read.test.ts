import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLogged, type SinceRead, sinceRead } from '../src/dataset/as-read.js';
import { CityLog } from '../src/dataset/city-log.js';
import { makeCity, tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-as-read-')));
afterAll(() => cleanup());

// What a build read of a dataset (its file and its log's whole records), against the dataset at
// its swap, under the lock a writable server logs under: a record in the log is acknowledged only
// once whole, so a torn write after the last whole one (a server killed mid-append) holds none.
describe('sinceRead: the dataset at a build swap against what the build read', () => {
  let n = 0;
  const TORN = '{"id": 9'; // a record cut short, no newline
  it.each<[string, (data: string, log: CityLog) => Promise<void> | void, SinceRead]>([
    ['nothing changed', () => {}, 'current'],
    [
      'a torn write after the records the build read (a server killed mid-append)',
      (_, log) => appendFileSync(log.path, TORN),
      'current',
    ],
    ['a city logged since', (_, log) => log.append([makeCity(7)]), 'grown'],
    [
      'a city logged since, then a torn write',
      async (_, log) => {
        await log.append([makeCity(7)]);
        appendFileSync(log.path, TORN);
      },
      'grown',
    ],
    ['the log cut (folded into the file elsewhere)', (_, log) => log.cut(0), 'moved'],
    [
      'a record the build read rewritten',
      (_, log) => writeFileSync(log.path, readFileSync(log.path, 'utf8').replace('"One"', '"Two"')),
      'moved',
    ],
    ['the dataset file changed', (data) => appendFileSync(data, '\n'), 'moved'],
  ])('%s', async (_, change, since) => {
    const data = join(root, `cities-${++n}.json`);
    writeFileSync(data, `[\n  ${JSON.stringify(makeCity(1))}\n]\n`);
    const target = await realpath(data);
    const log = CityLog.of(target);
    await log.append([makeCity(5, { name: 'One' })]);
    const { read } = await readLogged(target, log);
    await change(data, log);
    expect(await sinceRead(data, read)).toBe(since);
  });
});
